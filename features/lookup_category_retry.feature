@req:quality-gates
Feature: Relevance and low-quality gates SHALL use qualityScore only
  Derived from the requirement prose ("category-filter low-quality retry decisions SHALL use the
  normalized `qualityScore`") and the design note, section 4.3: a lookup filtered by category is retried
  without the filter exactly when its result is low quality, that is, no usable evidence or a top
  qualityScore below the reference threshold. The retry result may be merged with the filtered one or
  replace it; both conform. Evidence keys stay unique either way.

  The kit sends the default thresholds (maxL2Distance 2, reference threshold 0.5) with every lookup.
  Where a scenario depends on "low quality", the corpus makes every allowed reading agree: dense mode
  (quality by the spec's L2 formula), or no evidence at all.

  @id:low-quality-filtered-lookup-retries-without-the-category @needs:lookup @derived
  Scenario: Low-quality filtered lookup retries without the category
    Given the kit's scenario corpus is loaded into the implementation
    And the best "billing" match for "snapshot" has a dense qualityScore below the reference threshold
    And the best match for "snapshot" without a category has a dense qualityScore meeting the threshold
    When lookup_knowledge runs in "dense" mode for "snapshot" filtered by category "billing"
    Then the lookup retried without the category
    And the evidence includes the best match for "snapshot" without a category
    And every evidence key is unique

  @id:filtered-lookup-without-evidence-retries-without-the-category @needs:lookup @derived
  Scenario Outline: Filtered lookup without evidence retries without the category
    Given the kit's scenario corpus is loaded into the implementation
    And no chunk of the corpus has category "legal"
    When lookup_knowledge runs in "<mode>" mode for "snapshot" filtered by category "legal"
    Then the lookup retried without the category
    And the evidence includes the best match for "snapshot" without a category
    And every evidence key is unique

    Examples:
      | mode   |
      | dense  |
      | hybrid |

  @id:good-filtered-lookup-does-not-retry @needs:lookup @derived
  Scenario Outline: Good filtered lookup does not retry
    Given the kit's scenario corpus is loaded into the implementation
    And the best "storage" match for "snapshot" is first in dense and hybrid order and meets the threshold
    When lookup_knowledge runs in "<mode>" mode for "snapshot" filtered by category "storage"
    Then the lookup used the filtered result without retrying
    And every evidence block belongs to category "storage"
    And every evidence key is unique

    Examples:
      | mode   |
      | dense  |
      | hybrid |

  @id:lookup-without-a-category-never-retries @needs:lookup @derived
  Scenario Outline: Lookup without a category never retries
    Given the kit's scenario corpus is loaded into the implementation
    And the best match for "compliance" without a category has a dense qualityScore below the threshold
    When lookup_knowledge runs in "<mode>" mode for "compliance" without a category
    Then the lookup used the unfiltered result without retrying
    And every evidence key is unique

    Examples:
      | mode   |
      | dense  |
      | hybrid |

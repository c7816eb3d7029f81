@req:quality-gates
Feature: Relevance and low-quality gates SHALL use qualityScore only
  Derived from the requirement prose ("category-filter low-quality retry decisions SHALL use the
  normalized `qualityScore`") and the design note, section 4.3: a lookup filtered by category is retried
  without the filter exactly when its result is low quality, that is, no usable evidence or a top
  qualityScore below the reference threshold. The retry result may be merged with the filtered one or
  replace it; both conform. Evidence keys stay unique either way.

  Every lookup is judged whole against the kit's own searches of the same corpus: the evidence must be a
  post-processing of the attempt it reports (rank order, dedup, the per-document cap and return-n, the
  spec's qualities, the gates), and the path must be the one the filtered result's quality demands. In
  hybrid mode an implementation may gate on the attached dense distance or on a rank mapping; where those
  readings disagree about "low quality", either path conforms. The settings each lookup sends (thresholds,
  maxL2Distance, caps, RRF k, L0 hints) vary here, because an implementation must read them all.

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

  @id:the-retry-reads-the-reference-threshold-only @needs:lookup @derived
  Scenario Outline: The retry reads the reference threshold, not the highly-relevant one
    Given the kit's scenario corpus is loaded into the implementation
    And the lookup settings are:
      | rag.reference-threshold       | <reference> |
      | rag.highly-relevant-threshold | <highly>    |
      | rag.max-l2-distance           | <maxL2>     |
    And the best "billing" match for "snapshot" has a dense qualityScore between the two thresholds
    When lookup_knowledge runs in "dense" mode for "snapshot" filtered by category "billing"
    Then the lookup used the filtered result without retrying
    And every evidence block belongs to category "billing"

    Examples: the best billing chunk scores 0.30 with maxL2Distance 2, and 0.65 with 4
      | reference | highly | maxL2 |
      | 0.25      | 0.9    | 2     |
      | 0.5       | 0.75   | 4     |

  @id:a-retry-that-is-low-quality-too-is-still-used @needs:lookup @derived
  Scenario: A retry that is low quality too is still used
    Given the kit's scenario corpus is loaded into the implementation
    And the best "storage" match for "compliance" has a dense qualityScore below the reference threshold
    And the best match for "compliance" without a category has a dense qualityScore below the threshold
    When lookup_knowledge runs in "dense" mode for "compliance" filtered by category "storage"
    Then the lookup retried without the category
    And the evidence includes the best match for "compliance" without a category
    And the lookup result SHALL be low quality

  @id:lookup-settings-decide-the-retry @needs:lookup @derived
  Scenario Outline: The configured maxL2Distance and thresholds decide the retry
    Given the kit's scenario corpus is loaded into the implementation
    And the lookup settings are:
      | rag.max-l2-distance     | <maxL2>     |
      | rag.reference-threshold | <reference> |
    When lookup_knowledge runs in "dense" mode for "snapshot" filtered by category "billing"
    Then the lookup path is "<path>"

    Examples: the best billing chunk has cosine 0.30: quality 0.30 with maxL2Distance 2, 0.65 with 4
      | maxL2 | reference | path             |
      | 2     | 0.5       | unfiltered_retry |
      | 4     | 0.5       | filtered         |
      | 4     | 0.7       | unfiltered_retry |
      | 2     | 0.2       | filtered         |

  @id:caps-and-return-n-bind-in-lookup @needs:lookup @derived
  Scenario Outline: The per-document cap and return-n bind in lookup too
    Given the kit's scenario corpus is loaded into the implementation
    And the lookup settings are:
      | rag.max-chunks-per-document | <cap>      |
      | rag.return-n                | <return n> |
      | retrieval.search.rrf-k      | <rrf k>    |
    When lookup_knowledge runs in "<mode>" mode for "replication" without a category
    Then the evidence keeps at most <cap> chunks of "db-replication-guide" and at most <return n> blocks
    And every evidence key is unique

    Examples: three chunks of one document rank among the first six, in both modes
      | mode   | cap | return n | rrf k |
      | dense  | 2   | 4        | 60    |
      | dense  | 1   | 3        | 60    |
      | hybrid | 2   | 4        | 60    |
      | hybrid | 2   | 5        | 1     |
      | hybrid | 3   | 6        | 1     |

  @id:lookup-hints-never-reorder-evidence @needs:lookup @derived
  Scenario Outline: L0 hints in a lookup never reorder or gate its evidence
    Given the kit's scenario corpus is loaded into the implementation
    And the lookup carries these L0 hints:
      | domain     | monitoring                                                   |
      | entities   | heartbeat                                                    |
      | keywords   | lag, monitor, tracks, replica, delay, timestamps, dashboards |
      | sourceType | runbook                                                      |
    When lookup_knowledge runs in "<mode>" mode for "replication" filtered by category "<category>"
    Then every evidence key is unique

    Examples: the hints match worse-ranked chunks best
      | mode   | category   |
      | dense  | database   |
      | hybrid | database   |
      | hybrid | operations |

@req:quality-gates
Feature: Relevance and low-quality gates SHALL use qualityScore only
  "`relevance_level`, completeness hints, `topSimilarity` (or equivalent top quality field), and
  category-filter low-quality retry decisions SHALL use the normalized `qualityScore`, not raw
  L2-under-hybrid fakes and not keyword-boosted final scores."

  "Top qualityScore" can be read as the first accepted block's quality or the highest one; every
  fixture here makes the two coincide. Relevance levels below the highly-relevant threshold are
  implementation-defined and not checked. topSimilarity is the reply's topQualityScore. Completeness
  hints are not part of the adapter reply yet. The category-filter retry is in
  lookup_category_retry.feature.

  @id:low-quality-uses-top-qualityscore @needs:post_process @spec:fd6dfd6f86e6
  Scenario Outline: Low quality uses top qualityScore
    Given the configured reference threshold is <threshold> and maxL2Distance is 2
    And these dense candidates:
      | docId | chunkIndex | originalRank | score | text                                     |
      | A     | 0          | 1            | <d>   | The warranty covers parts for two years. |
      | B     | 0          | 2            | 1.9   | Shipping times vary by region.           |
    And L0 hints that no candidate contains:
      | domain   | aviation          |
      | entities | Lufthansa         |
      | keywords | turbine, fuselage |
    When post-process finishes with at least one evidence block
    Then the top qualityScore is <top>
    And low-quality detection SHALL compare the top qualityScore to the configured reference threshold: low quality is <low>
    And it SHALL NOT require L0 hint contains-match to treat the result as usable when quality meets threshold

    Examples:
      | threshold | d    | top   | low |
      | 0.5       | 0.2  | 0.9   | no  |
      | 0.5       | 1    | 0.5   | no  |
      | 0.5       | 1.01 | 0.495 | yes |
      | 0.5       | 1.9  | 0.05  | yes |
      | 0.3       | 1.2  | 0.4   | no  |
      | 0.7       | 0.7  | 0.65  | yes |

  @id:precise-does-not-require-hint-support @needs:post_process @spec:dbb61ba9905e
  Scenario Outline: PRECISE does not require hint support
    Given the configured highly-relevant threshold is <threshold>
    And these <label> candidates:
      | docId | chunkIndex | originalRank | score     | text                                     |
      | A     | 0          | 1            | <score A> | The warranty covers parts for two years. |
      | B     | 0          | 2            | <score B> | Shipping times vary by region.           |
    And L0 hints that no candidate contains:
      | domain   | aviation          |
      | entities | Lufthansa         |
      | keywords | turbine, fuselage |
    When post-process runs
    And the top qualityScore is at or above the highly-relevant threshold
    Then the relevance level SHALL be PRECISE or HIGHLY_RELEVANT, without domain/entity/keyword contains support

    Examples:
      | label  | threshold | score A   | score B   |
      | dense  | 0.75      | 0         | 1.5       |
      | dense  | 0.75      | 0.5       | 1.5       |
      | dense  | 0.9       | 0.1       | 1.5       |
      | hybrid | 0.75      | 0.0327869 | 0.0322581 |

  @id:l0-hints-never-change-the-gates @derived @needs:post_process
  Scenario Outline: L0 hints never change the gates
    Given these <label> candidates:
      | docId | chunkIndex | originalRank | score     | sourceType | text                                            |
      | A     | 0          | 1            | <score A> | manual     | Acme billing: refund of a duplicate invoice.    |
      | B     | 0          | 2            | <score B> | faq        | Acme billing FAQ: refund and invoice deadlines. |
      | C     | 0          | 3            | <score C> | faq        | Acme billing: refund by card or invoice credit. |
    And L0 hints that no candidate contains:
      | domain   | aviation          |
      | entities | Lufthansa         |
      | keywords | turbine, fuselage |
    And L0 hints that every candidate contains:
      | domain     | billing         |
      | entities   | Acme            |
      | keywords   | refund, invoice |
      | sourceType | faq             |
    When post-process runs with no hints, with the hints no candidate contains, and with the hints every candidate contains
    Then the relevance level, the low-quality flag and topSimilarity SHALL be the same all three times
    And the accepted blocks and their qualityScores SHALL be the same all three times

    Examples: high, middling and poor quality
      | label  | score A   | score B   | score C   |
      | dense  | 0.2       | 0.4       | 0.9       |
      | dense  | 0.8       | 0.9       | 1.2       |
      | dense  | 1.4       | 1.6       | 1.8       |
      | hybrid | 0.0327869 | 0.0322581 | 0.0317460 |

  @id:topsimilarity-follows-the-top-qualityscore @derived @needs:post_process
  Scenario Outline: topSimilarity follows the top qualityScore
    Given these <label> candidates:
      | docId | chunkIndex | originalRank | score     | text                                     |
      | A     | 0          | 1            | <score A> | The warranty covers parts for two years. |
      | B     | 0          | 2            | <score B> | Shipping times vary by region.           |
    When post-process finishes with at least one evidence block
    Then topSimilarity SHALL equal the top qualityScore

    Examples:
      | label  | score A   | score B   |
      | dense  | 0.3       | 1.1       |
      | dense  | 1.5       | 1.7       |
      | hybrid | 0.0327869 | 0.0322581 |

  @id:no-accepted-evidence-is-low-quality @derived @needs:post_process
  Scenario: No accepted evidence is low quality
    Given no candidates
    When post-process runs
    Then no evidence block is accepted
    And the result SHALL be low quality

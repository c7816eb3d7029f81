@req:quality-gates
Feature: Relevance and low-quality gates SHALL use qualityScore only
  "`relevance_level`, completeness hints, `topSimilarity` (or equivalent top quality field), and
  category-filter low-quality retry decisions SHALL use the normalized `qualityScore`, not raw
  L2-under-hybrid fakes and not keyword-boosted final scores."

  "Top qualityScore" can be read as the first accepted block's quality or the highest one; the fixtures
  that name a number make the two coincide, and every reply is also checked against both readings.
  Level names are the implementation's: at or above the highly-relevant threshold the spec permits
  PRECISE or HIGHLY_RELEVANT without requiring hint support, so what is checked is that the level does
  not depend on hints. topSimilarity is the reply's topQualityScore. A completeness hint may come as an
  extra reply field: it is reported, not judged. The category-filter retry is in
  lookup_category_retry.feature.

  @id:low-quality-uses-top-qualityscore @needs:post_process @spec:fd6dfd6f86e6
  Scenario Outline: Low quality uses top qualityScore
    Given the configured reference threshold is <threshold> and maxL2Distance is <maxL2>
    And rag.max-chunks-per-document is 2 and rag.return-n is <return n>
    And these dense candidates:
      | docId | chunkIndex | originalRank | score | text                                     |
      | A     | 0          | 1            | <d>   | The warranty covers parts for two years. |
      | B     | 0          | 2            | 3.9   | Shipping times vary by region.           |
      | C     | 0          | 3            | 0.1   | Opening hours of the service desk.       |
    And L0 hints that no candidate contains:
      | domain   | aviation          |
      | entities | Lufthansa         |
      | keywords | turbine, fuselage |
    When post-process finishes with at least one evidence block
    Then the top qualityScore is <top>
    And low-quality detection SHALL compare the top qualityScore to the configured reference threshold: low quality is <low>
    And it SHALL NOT require L0 hint contains-match to treat the result as usable when quality meets threshold

    Examples: the threshold, maxL2Distance, and a removed candidate that outscores the accepted ones
      | threshold | maxL2 | return n | d       | top     | low |
      | 0.5       | 2     | 2        | 0.2     | 0.9     | no  |
      | 0.5       | 2     | 2        | 1       | 0.5     | no  |
      | 0.5       | 2     | 2        | 1.01    | 0.495   | yes |
      | 0.5       | 2     | 2        | 1.00008 | 0.49996 | yes |
      | 0.5       | 2     | 2        | 1.9     | 0.05    | yes |
      | 0.3       | 2     | 2        | 1.2     | 0.4     | no  |
      | 0.7       | 2     | 2        | 0.7     | 0.65    | yes |
      | 0.5       | 4     | 2        | 2.2     | 0.45    | yes |
      | 0.5       | 4     | 2        | 1.9     | 0.525   | no  |
      | 0.7       | 0.6   | 2        | 0.06    | 0.9     | no  |
      | 0.5       | 2     | 1        | 1.2     | 0.4     | yes |

  @id:precise-does-not-require-hint-support @needs:post_process @spec:dbb61ba9905e
  Scenario Outline: PRECISE does not require hint support
    Given the configured highly-relevant threshold is <threshold>
    And these <label> candidates:
      | docId | chunkIndex | originalRank | score     | text                                            |
      | A     | 0          | 1            | <score A> | Acme billing: refund of a duplicate invoice.    |
      | B     | 0          | 2            | <score B> | Acme billing FAQ: refund and invoice deadlines. |
    And L0 hints that no candidate contains:
      | domain   | aviation          |
      | entities | Lufthansa         |
      | keywords | turbine, fuselage |
    And L0 hints that every candidate contains:
      | domain   | billing                                  |
      | entities | Acme                                     |
      | keywords | refund, invoice, duplicate, faq, billing |
    When post-process runs with no hints, with the hints no candidate contains, and with the hints every candidate contains
    Then the top qualityScore is at or above the highly-relevant threshold every time
    And the system MAY assign PRECISE or HIGHLY_RELEVANT without requiring domain/entity/keyword contains support: the relevance level is the one it gets with supporting hints

    Examples:
      | label  | threshold | score A   | score B   |
      | dense  | 0.75      | 0         | 1.5       |
      | dense  | 0.75      | 0.5       | 1.5       |
      | dense  | 0.9       | 0.1       | 1.5       |
      | dense  | 0.6       | 0.8       | 1.9       |
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
      | domain     | billing    |
      | entities   | Acme       |
      | keywords   | <keywords> |
      | sourceType | faq        |
    When post-process runs with no hints, with the hints no candidate contains, and with the hints every candidate contains
    Then the relevance level, the low-quality flag and topSimilarity SHALL be the same all three times
    And the accepted blocks and their qualityScores SHALL be the same all three times

    Examples: high, middling and poor quality, few and many keywords
      | label  | score A   | score B   | score C   | keywords                                  |
      | dense  | 0.2       | 0.4       | 0.9       | refund, invoice                           |
      | dense  | 0.8       | 0.9       | 1.2       | refund, invoice                           |
      | dense  | 1.4       | 1.6       | 1.8       | refund, invoice                           |
      | dense  | 1.4       | 1.6       | 1.8       | refund, invoice, acme, billing, faq, card |
      | dense  | 0.8       | 0.9       | 1.2       | refund, invoice, acme, billing, faq, card |
      | hybrid | 0.0327869 | 0.0322581 | 0.0317460 | refund, invoice                           |
      | hybrid | 0.0327869 | 0.0322581 | 0.0317460 | refund, invoice, acme, billing, faq, card |

  @id:topsimilarity-follows-the-top-qualityscore @derived @needs:post_process
  Scenario Outline: topSimilarity follows the top qualityScore
    Given maxL2Distance is <maxL2>
    And these <label> candidates:
      | docId | chunkIndex | originalRank | score     | denseDistance | text                                     |
      | A     | 0          | 1            | <score A> | <dd A>        | The warranty covers parts for two years. |
      | B     | 0          | 2            | <score B> | <dd B>        | Shipping times vary by region.           |
    When post-process finishes with at least one evidence block
    Then topSimilarity SHALL equal the top qualityScore

    Examples: both readings of "top" agree
      | label  | maxL2 | score A   | score B   | dd A | dd B |
      | dense  | 2     | 0.3       | 1.1       |      |      |
      | dense  | 2     | 1.5       | 1.7       |      |      |
      | dense  | 4     | 1.5       | 3.7       |      |      |
      | hybrid | 2     | 0.0327869 | 0.0322581 |      |      |
      | hybrid | 2     | 0.0327869 | 0.0322581 | 0.3  | 0.9  |

  @id:no-accepted-evidence-is-low-quality @derived @needs:post_process
  Scenario: No accepted evidence is low quality
    Given no candidates
    When post-process runs
    Then no evidence block is accepted
    And the result SHALL be low quality

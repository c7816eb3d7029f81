@engine @req:engine-behaviour
Feature: Milvus engine behaviour the kit and the reference rely on
  Not a requirement of the spec. These scenarios pin what the Milvus engine itself does, asked through
  the kit's own raw pymilvus client, so that an upgrade which changes it is noticed before the upgrade.
  An engine without hybrid search or BM25 makes those scenarios NOT APPLICABLE, with the reason. A known
  difference of one engine is an expected failure listed in conformance/expectations/, with its reason.

  Vectors are chosen so that no two documents tie unless a scenario says so: with the query 0, 0, 0, 0
  the dense order is 1, 2, 3, 4, 5 and the BM25 query "refund invoice" matches 2 (both terms), then 5.

  Background:
    Given the engine holds these documents:
      | pk | category | text                                      | vector     |
      | 1  | manual   | Warranty covers spare parts for two years | 0, 0, 0, 0 |
      | 2  | policy   | A refund needs the invoice number         | 1, 0, 0, 0 |
      | 3  | manual   | Opening hours of the service desk         | 1, 2, 0, 0 |
      | 4  | policy   | Shipping times vary by region             | 3, 0, 4, 0 |
      | 5  | faq      | Refund of a warranty repair               | 0, 0, 0, 6 |

  @id:engine-l2-is-squared-euclidean
  Scenario: L2 distance is squared Euclidean
    When the engine searches the vector field for 0, 0, 0, 0 with metric L2
    Then the distances are, to float32 precision:
      | pk | distance |
      | 1  | 0        |
      | 2  | 1        |
      | 3  | 5        |
      | 4  | 25       |
      | 5  | 36       |

  @id:engine-dense-results-ascend-by-distance
  Scenario: Dense results come back by ascending distance
    When the engine searches the vector field for 0.9, 0, 0, 0 with metric L2
    Then the hits are in this order: 2, 1, 3, 4, 5
    And the scores do not decrease from one hit to the next

  @id:engine-hybrid-results-descend-by-fused-score
  Scenario: Hybrid results come back by descending fused score
    Given the engine supports hybrid search and BM25
    When the engine runs a hybrid search of 0, 0, 0, 0 and "refund invoice" with RRF k = 60
    Then the hits are in this order: 2, 5, 1, 3, 4
    And the scores do not increase from one hit to the next

  @id:engine-rrf-fused-score-is-sum-of-reciprocal-ranks
  Scenario Outline: The RRF fused score is the sum of 1/(k + rank), rank counted from 1
    Given the engine supports hybrid search and BM25
    When the engine runs a hybrid search of 0, 0, 0, 0 and "refund invoice" with RRF k = <k>
    Then every fused score is the sum of 1/(k + rank) over the dense and the BM25 search run alone

    Examples:
      | k     |
      | 1     |
      | 60    |
      | 16383 |

  @id:engine-rrf-k-outside-range-rejected
  Scenario Outline: RRF k outside (0, 16384) is rejected
    Given the engine supports hybrid search and BM25
    When the engine runs a hybrid search of 0, 0, 0, 0 and "refund invoice" with RRF k = <k>
    Then the engine rejects the request

    Examples:
      | k     |
      | 0     |
      | 16384 |

  @id:engine-hybrid-distance-is-fused-score
  Scenario: The hybrid distance is the fused score, not a distance
    Given the engine supports hybrid search and BM25
    When the engine runs a hybrid search of 1, 0, 0, 0 and "refund invoice" with RRF k = 60
    Then the first hit is 2, ranked first by both searches, and its distance is 2/(k + 1) = 0.0327869
    And every distance is positive and at most 2/(k + 1)

  @id:engine-hybrid-returns-requested-fields
  Scenario: Hybrid search returns the requested scalar fields and the dense vector
    Given the engine supports hybrid search and BM25
    When the engine runs a hybrid search of 0, 0, 0, 0 and "refund invoice" with RRF k = 60, asking for category, vector
    Then every hit carries its category and its vector as stored
    And squared L2 computed in float32 from each returned vector equals the dense search's distance

  @id:engine-bm25-best-match-first
  Scenario: BM25 ranks the document matching more query terms first
    Given the engine supports BM25
    When the engine runs a BM25 search for "refund invoice"
    Then the hits are in this order: 2, 5

  @id:engine-bm25-scores-non-negative
  Scenario: BM25 scores are non-negative, higher is better
    Given the engine supports BM25
    When the engine runs a BM25 search for "refund invoice"
    Then every score is at least 0
    And the scores do not increase from one hit to the next

  @id:engine-bm25-no-matching-term-returns-nothing
  Scenario: A BM25 query with no matching term returns nothing
    Given the engine supports BM25
    When the engine runs a BM25 search for "zeppelin"
    Then the engine returns no hits

  @id:engine-dense-filter-keeps-matching-only
  Scenario: A filtered dense search returns only matching documents
    When the engine searches the vector field for 0, 0, 0, 0 with metric L2, filtered by category == "policy"
    Then every hit has category "policy"
    And the hits are exactly the "policy" hits of the same search without the filter

  @id:engine-hybrid-filter-on-every-sub-request
  Scenario: A filter set on every sub-request returns only matching documents
    Given the engine supports hybrid search and BM25
    When the engine runs a hybrid search of 0, 0, 0, 0 and "refund invoice" with RRF k = 60, filtered by category == "policy" on every sub-request
    Then every hit has category "policy"
    And the hits are exactly the "policy" hits of the same search without the filter

  @id:engine-fused-ties-by-primary-key
  Scenario: Equal fused scores come back by ascending primary key
    Given the engine supports hybrid search
    And a collection with two vector fields, rows inserted in descending primary key order:
      | pk | first | second |
      | 40 | 1, 0  | 2, 0   |
      | 30 | 3, 0  | 4, 0   |
      | 20 | 4, 0  | 3, 0   |
      | 10 | 2, 0  | 1, 0   |
    When the engine runs a hybrid search of 0, 0 on both vector fields with RRF k = 60
    Then the hits are in this order: 10, 40, 20, 30
    And hits 10 and 40 have equal scores, and so do hits 20 and 30

  @id:engine-upsert-replaces
  Scenario: Upsert replaces a row instead of adding a second one
    Given a dense collection holding these rows:
      | pk | category | vector     |
      | 1  | manual   | 0, 0, 0, 0 |
      | 2  | policy   | 1, 0, 0, 0 |
    When the engine upserts pk 2 with category "faq" and vector 0, 0, 0, 9
    Then a query for every row returns 2 rows
    And pk 2 has category "faq" and vector 0, 0, 0, 9
    And a dense search for 0, 0, 0, 9 returns pk 2 once, at distance 0

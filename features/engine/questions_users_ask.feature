@engine @req:engine-behaviour
Feature: Milvus engine behaviour: the questions users of hybrid search ask
  Not a requirement of the spec. Each scenario asks the engine, through the kit's own raw pymilvus client,
  a question that teams building retrieval on Milvus have asked in public, cites the thread, and records
  what this engine does as an engine fact ("engine fact: <name>: <what it did>" among the scenario's notes
  in report.json), so that docs/engine-behaviour.md can show each fact by engine version. A scenario fails
  only where the engine breaks its own documented behaviour; it never judges an implementation.

  Background:
    Given the engine holds these documents:
      | pk | category | text                                      | vector     |
      | 1  | manual   | Warranty covers spare parts for two years | 0, 0, 0, 0 |
      | 2  | policy   | A refund needs the invoice number         | 1, 0, 0, 0 |
      | 3  | manual   | Opening hours of the service desk         | 1, 2, 0, 0 |
      | 4  | policy   | Shipping times vary by region             | 3, 0, 4, 0 |
      | 5  | faq      | Refund of a warranty repair               | 0, 0, 0, 6 |

  # mem0ai/mem0#6933 and #3940, milvus-io/milvus#26675: libraries read COSINE's `distance` as a distance
  # (lower is better) or L2's as a similarity, inverting their ranking and dropping exact matches.
  @id:engine-metric-direction-range-and-exact-match
  Scenario Outline: What a metric's distance means: its direction, its range and an exact match
    Given a collection of pks 2 to 5 above, indexed with metric <metric>
    When the engine searches it for pk 3's vector 1, 2, 0, 0 with metric <metric>
    Then pk 3, the exact match, comes first with distance <exact>
    And the distances <direction> from one hit to the next
    And every distance lies within <range>

    Examples:
      | metric | exact                     | direction               | range        |
      | L2     | 0                         | do not decrease         | [0, inf)     |
      | IP     | 5 (its squared length)    | do not increase         | (-inf, inf)  |
      | COSINE | 1                         | do not increase         | [-1, 1]      |

  # milvus-io/milvus#29923: the same hybrid request gave other ids on a second call.
  @id:engine-same-hybrid-request-same-answer
  Scenario: The same hybrid request asked twenty times gives the same hits and scores
    Given the engine supports hybrid search and BM25
    When the engine runs a hybrid search of 0, 0, 0, 0 and "refund invoice" with RRF k = 60 twenty times
    Then every answer has the same pks in the same order with the same scores as the first

  # milvus-io/milvus#45338 (fixed by milvus-io/milvus#45482) and #32222: with several queries in one hybrid
  # call, every query's hits carried the first query's output fields, or the call failed.
  @id:engine-several-queries-in-one-call
  Scenario Outline: Several queries in one call each get their own hits and fields
    Given the engine supports <needs>
    When the engine runs one <call> for the queries 0, 0, 0, 0 with "refund invoice" and 0, 0, 0, 6 with "warranty"
    Then each query's hits are those of the same query asked alone, in the same order
    And every hit carries the category of its own row

    Examples:
      | call          | needs                 |
      | dense search  | dense search          |
      | hybrid search | hybrid search and BM25 |

  # milvus-io/milvus#41385: `offset` did nothing in a BM25-only search.
  @id:engine-offset-skips-the-first-hits
  Scenario Outline: An offset skips the first hits of a dense, BM25 or hybrid search
    Given the engine supports <needs>
    When the engine runs the <search> once with limit 5 and once with offset 2 and limit 3
    Then the hits with the offset are the hits of the first answer from its third on

    Examples:
      | search        | needs                  |
      | dense search  | dense search           |
      | BM25 search   | BM25                   |
      | hybrid search | hybrid search and BM25 |

  # milvus-io/milvus#29839, #38244 and #35062: a hybrid call over one field was expected to return that
  # field's own order and distances; it returns the fused score instead.
  @id:engine-hybrid-with-one-sub-request
  Scenario: A hybrid call with one sub-request keeps that search's order and scores each hit 1/(k + rank)
    Given the engine supports hybrid search
    When the engine runs a hybrid search with the one dense sub-request 0, 0, 0, 0 and RRF k = 60
    Then the hits are in this order: 1, 2, 3, 4, 5
    And every fused score is 1/(k + rank) of that search run alone

  # milvus-io/milvus#40836 and #37477: WeightedRanker normalizes each sub-request's scores by default, which
  # can reorder hits; norm_score=False (pymilvus 2.5.x and later) skips it where the engine supports it.
  @id:engine-weighted-ranker-and-norm-score
  Scenario Outline: A WeightedRanker's fused score, with norm_score on, off and by default
    Given the engine supports hybrid search and BM25
    When the engine runs a hybrid search of 0, 0, 0, 0 and "refund invoice" with a WeightedRanker of 0.5 and 0.5, norm_score <norm_score>
    Then the hits come back by descending fused score
    And every fused score is 0.5 times the dense score plus 0.5 times the BM25 score, each as one of the engine's normalizations

    Examples:
      | norm_score |
      | default    |
      | true       |
      | false      |

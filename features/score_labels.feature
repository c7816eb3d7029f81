@req:score-labels
Feature: Primary score labels SHALL be only dense or hybrid
  "Knowledge search hits used by `lookup_knowledge` SHALL set `scoreLabel` to `dense` or `hybrid` (after
  any legacy alias canonicalization). The system SHALL NOT treat `bm25_only_no_dense`, `rrf_fused`, or
  `l2_distance` as distinct first-class labels in new emissions."

  Searches run against the kit's own scenario corpus. The kit knows the answers in advance from its own
  oracle: brute-force squared L2 distances (Milvus's L2 metric is squared Euclidean) and RRF (with the k
  each request carries, 60 unless said otherwise) fused from separate dense and keyword searches. Every
  search reply is checked whole: ranks 1..n, labels, the dense scores, the hybrid order, hybrid scores
  that are fused scores (or ordered like them), any attached denseDistance, and what reached Milvus. Labels are canonicalized with the kit's own table:
  `dense` and `l2_distance` mean dense; `hybrid`, `rrf_fused` and `bm25_only_no_dense` mean hybrid.

  @id:dense-mode-labels-hits-as-dense @needs:search @spec:b596047db7fb
  Scenario Outline: Dense mode labels hits as dense
    Given the kit's scenario corpus is loaded into the implementation
    When retrieval.search.mode is "dense" and the implementation searches the corpus for "<question>"
    Then search returns hits
    And each hit has a scoreLabel canonicalizing to "dense"
    And each hit's score is the dense L2 distance of its chunk
    And originalRank orders the hits by ascending dense L2 distance

    Examples:
      | question    |
      | failover    |
      | replication |

  @id:hybrid-mode-labels-hits-as-hybrid @needs:search @spec:d9d5d669bb92
  Scenario Outline: Hybrid mode labels hits as hybrid
    Given the kit's scenario corpus is loaded into the implementation
    And the hybrid/RRF order for "<question>" differs from its dense L2 order
    When retrieval.search.mode is "hybrid" with RRF k <rrf k> and the implementation searches the corpus for "<question>"
    Then search returns hits
    And each hit has a scoreLabel canonicalizing to "hybrid"
    And hit order follows the hybrid/RRF result order via originalRank

    Examples: the RRF k requested changes the order of "replication"
      | question    | rrf k |
      | failover    | 60    |
      | replication | 60    |
      | replication | 1     |

  @id:a-category-filter-restricts-search @needs:search @derived
  Scenario Outline: A category filter restricts the search to the category
    Given the kit's scenario corpus is loaded into the implementation
    When retrieval.search.mode is "<mode>" and the implementation searches category "<category>" for "<question>"
    Then search returns hits
    And every hit belongs to category "<category>"

    Examples:
      | mode   | category   | question    |
      | dense  | database   | replication |
      | hybrid | database   | replication |
      | hybrid | operations | replication |
      | dense  | billing    | snapshot    |

  @id:legacy-aliases-canonicalize @needs:quality @spec:bbb53ee2219d
  Scenario Outline: Legacy aliases canonicalize
    When a candidate carries the legacy label "<legacy label>"
    Then quality normalization gives it the same qualityScore as the label "<canonical label>"

    Examples:
      | legacy label       | canonical label |
      | l2_distance        | dense           |
      | rrf_fused          | hybrid          |
      | bm25_only_no_dense | hybrid          |

  @id:legacy-aliases-canonicalize-in-post-process @needs:post_process @spec:bbb53ee2219d
  Scenario Outline: Legacy aliases canonicalize (post-process)
    When post-process handles candidates carrying the legacy label "<legacy label>"
    Then their evidence blocks carry the label "<canonical label>" and the qualityScores of that label

    Examples:
      | legacy label       | canonical label |
      | l2_distance        | dense           |
      | rrf_fused          | hybrid          |
      | bm25_only_no_dense | hybrid          |

  @id:legacy-aliases-canonicalize-label-api @needs:labels @spec:bbb53ee2219d
  Scenario Outline: Legacy aliases canonicalize (label API)
    When a candidate carries the legacy label "<legacy label>"
    Then the label canonicalizes to "<canonical label>"

    Examples:
      | legacy label       | canonical label |
      | l2_distance        | dense           |
      | rrf_fused          | hybrid          |
      | bm25_only_no_dense | hybrid          |

  @id:canonical-labels-stay-canonical-label-api @needs:labels @derived
  Scenario Outline: Canonical labels stay canonical (label API)
    When a candidate carries the canonical label "<label>"
    Then the label canonicalizes to "<label>"

    Examples:
      | label  |
      | dense  |
      | hybrid |

@req:no-l2-overwrite
Feature: Hybrid search SHALL NOT overwrite scores with dense L2 for post-process
  "When hybrid search runs, the store SHALL NOT replace hybrid hit scores with a parallel dense L2 map for
  the purpose of post-process thresholds, and SHALL NOT assign max-L2 weak placeholders under a
  `bm25_only_*` primary label."

  The question "failover" is built so that one chunk is found only by keyword search (BM25 ranks it
  first, dense search at the same limit does not find it) and so that every hybrid hit's fused score
  differs from its dense L2 distance. Attaching a true dense distance is allowed (optional denseDistance);
  replacing the score with it, or giving the keyword-only chunk a max-L2 placeholder, is not.

  @id:no-l2-enrichment-overwrite @needs:search @spec:cfd8fbef121a
  Scenario: No L2 enrichment overwrite
    Given the kit's scenario corpus is loaded into the implementation
    When retrieval.search.mode is "hybrid" and the implementation searches the corpus for "failover"
    Then the hits include the chunk that only keyword search finds
    And no hit's score is forced to its dense L2 distance
    And the chunk that only keyword search finds is not given a max-L2 placeholder score
    And any denseDistance attached to a hit is the dense L2 distance of its chunk
    And no hit carries the primary score label "bm25_only_no_dense"
    And each hit has a scoreLabel canonicalizing to "hybrid"

  @id:no-l2-enrichment-overwrite-lookup @needs:lookup @spec:cfd8fbef121a
  Scenario: No L2 enrichment overwrite (lookup)
    Given the kit's scenario corpus is loaded into the implementation
    When lookup_knowledge runs in "hybrid" mode for "failover" without a category
    Then the evidence includes the chunk that only keyword search finds
    And no evidence block carries the primary score label "bm25_only_no_dense"
    And every evidence block has a scoreLabel canonicalizing to "hybrid"
    And the chunk that only keyword search finds does not get the qualityScore of a max-L2 placeholder

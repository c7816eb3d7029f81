@req:dense-distance-gates
Feature: Hybrid quality gates MAY use optional dense distance without reordering
  "When hybrid search attaches an optional dense L2 distance for a hit, quality normalization and
  low-quality gates MAY use that distance for absolute similarity. Retrieval order SHALL remain the
  hybrid/RRF order and the primary scoreLabel SHALL remain hybrid."

  For the question "failover" the hybrid/RRF order and the dense-distance order of the same hits differ,
  so an implementation that let denseDistance reorder hits or evidence is seen. The post-process variant
  hands over hybrid candidates whose denseDistance order is the reverse of their originalRank, so it
  also applies to implementations without search.

  @id:dense-distance-does-not-replace-hybrid-label @needs:search @spec:7ad6b5c08553
  Scenario: Dense distance does not replace hybrid label
    Given the kit's scenario corpus is loaded into the implementation
    And the hybrid/RRF order for "failover" differs from its dense L2 order
    When retrieval.search.mode is "hybrid" and the implementation searches the corpus for "failover"
    Then each hit has a scoreLabel canonicalizing to "hybrid"
    And any denseDistance attached to a hit is the dense L2 distance of its chunk
    And hit order follows the hybrid/RRF result order via originalRank

  @id:dense-distance-does-not-replace-hybrid-label-lookup @needs:lookup @spec:7ad6b5c08553
  Scenario: Dense distance does not replace hybrid label (lookup)
    Given the kit's scenario corpus is loaded into the implementation
    And the hybrid/RRF order for "failover" differs from its dense L2 order
    When lookup_knowledge runs in "hybrid" mode for "failover" without a category
    Then every evidence block has a scoreLabel canonicalizing to "hybrid"
    And the evidence follows originalRank from the hybrid results

  @id:dense-distance-does-not-replace-hybrid-label-post-process @needs:post_process @spec:7ad6b5c08553
  Scenario Outline: Dense distance does not replace hybrid label (post-process)
    Given maxL2Distance is <maxL2>
    And <label> candidates carrying denseDistance on <which> candidates, in the opposite order of their originalRank
    When the implementation post-processes these hybrid candidates
    Then every evidence block has a scoreLabel canonicalizing to "hybrid"
    And the accepted evidence is in originalRank order

    Examples: labels and aliases, another maxL2Distance, denseDistance on every or on some candidates
      | label              | maxL2 | which |
      | hybrid             | 2     | every |
      | hybrid             | 4     | every |
      | rrf_fused          | 2     | some  |
      | bm25_only_no_dense | 0.6   | every |

@req:quality-gates
Feature: Relevance and low-quality gates SHALL use qualityScore only
  "`relevance_level`, completeness hints, `topSimilarity` (or equivalent top quality field), and
  category-filter low-quality retry decisions SHALL use the normalized `qualityScore`, not raw
  L2-under-hybrid fakes and not keyword-boosted final scores."

  Universal statements of this requirement, checked by Hypothesis. Candidates come in any order, with
  tied ranks, duplicates, chunks sharing a document, removed candidates that outscore the accepted ones,
  and denseDistance on all, some or none of the hybrid hits. "Top qualityScore" may be the first accepted
  block's or the highest (both readings are accepted where they differ); level names are the
  implementation's and only compared with each other.

  @id:prop-gates-follow-the-top-qualityscore-and-thresholds @property @derived @needs:post_process
  Scenario: For any result and thresholds, low quality and the level follow the accepted qualityScores
    Given any candidates in any input order, any L0 hints and any configuration
    Then low quality SHALL be exactly a top accepted qualityScore below the reference threshold, and the relevance level SHALL be the same without the hints

  @id:prop-same-qualityscores-same-gates @property @derived @needs:post_process
  Scenario: For any two results with the same qualityScores, the gates decide the same
    Given any two results with the same qualityScore inputs and different texts, docIds, hints and raw hybrid scores
    Then both SHALL get the same low-quality decision and the same relevance level

  @id:prop-lookup-on-a-real-knowledge-base @property @derived @needs:lookup
  Scenario: For any lookup of a real knowledge base, the evidence post-processes its search and the retry follows the filtered quality
    Given a knowledge base like a real team's, loaded into the implementation
    And any lookup of it: any query shape, category, settings and L0 hints, in either mode
    Then the evidence SHALL be a post-processing of the search the mode names, and the category retry SHALL run exactly when the filtered result is low quality

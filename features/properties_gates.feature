@req:quality-gates
Feature: Relevance and low-quality gates SHALL use qualityScore only
  "`relevance_level`, completeness hints, `topSimilarity` (or equivalent top quality field), and
  category-filter low-quality retry decisions SHALL use the normalized `qualityScore`, not raw
  L2-under-hybrid fakes and not keyword-boosted final scores."

  Universal statements of this requirement, checked by Hypothesis. Results are rank-ordered as a search
  emits them (dense distances ascend with rank, hybrid hits carry no denseDistance), so the first
  accepted block is also the best one and both readings of "top qualityScore" agree. Level names below
  the highly-relevant threshold are implementation-defined and only compared with each other.

  @id:prop-gates-follow-the-top-qualityscore-and-thresholds @property @derived @needs:post_process
  Scenario: For any result and thresholds, low quality and the top level follow the top qualityScore
    Given any rank-ordered result, any L0 hints and any thresholds
    Then low quality SHALL be exactly a top qualityScore below the reference threshold, and at or above the highly-relevant threshold the level SHALL be PRECISE or HIGHLY_RELEVANT

  @id:prop-same-qualityscores-same-gates @property @derived @needs:post_process
  Scenario: For any two results with the same qualityScores, the gates decide the same
    Given any two rank-ordered results with the same qualityScore inputs and different texts, docIds, hints and raw hybrid scores
    Then both SHALL get the same low-quality decision and the same relevance level

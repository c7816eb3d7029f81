@req:single-normalizer
Feature: Quality score SHALL be produced by a single normalizer
  "The pipeline SHALL compute a `qualityScore` in `[0, 1]` (higher is better) using one normalizer API
  that branches only on canonical label."

  Universal statements of this requirement, checked by Hypothesis over generated inputs through the
  adapter. The run's seed is in the report; `--rqs-seed` replays it, `--rqs-profile` sets the example
  count. A failure shows the shrunk falsifying example. Only what every conforming reading satisfies is
  checked: any rank mapping with rank 1 -> 1.0 that never increases with rank passes.

  @id:prop-rank-mapping-monotone-for-any-batch-size @property @derived @needs:quality
  Scenario: For any batch size, the hybrid rank mapping never increases with rank and maps rank 1 to 1.0
    Given any hybrid batch size n from 1 to 1000 and any two ranks within it
    Then qualityScore SHALL NOT increase from the better rank to the worse one, and rank 1 SHALL map to 1.0

  @id:prop-quality-within-0-and-1-for-any-input @property @derived @needs:quality
  Scenario: For any label, score, rank and distance, qualityScore lies within [0, 1]
    Given any label or legacy alias, score, rank, batch size, maxL2Distance and denseDistance
    Then qualityScore SHALL lie within [0, 1]

  @id:prop-raw-hybrid-scores-change-nothing @property @derived @needs:post_process
  Scenario: For any hybrid batch without denseDistance, raw score magnitudes change neither order nor quality
    Given any hybrid batch without denseDistance, and new raw scores for it
    Then neither the accepted order nor any qualityScore SHALL change

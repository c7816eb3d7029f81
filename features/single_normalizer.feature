@req:single-normalizer
Feature: Quality score SHALL be produced by a single normalizer
  "The pipeline SHALL compute a `qualityScore` in `[0, 1]` (higher is better) using one normalizer API
  that branches only on canonical label."

  The kit asks the normalizer directly, and compares numbers to float32 precision (1e-6): an
  implementation computing in float32 conforms, one rounding to a few decimals does not (0.49996 rounded
  to 0.5 would flip the low-quality gate). Where the spec gives the formula (dense) it checks the number;
  where it gives only properties (hybrid) it checks the properties, so any rank mapping with those
  properties passes. Evidence blocks must carry what the normalizer answers for their candidate, with
  the configured maxL2Distance and whatever denseDistance the candidate carries.

  @id:dense-quality-from-l2 @needs:quality @spec:6d62a7601ae4
  Scenario Outline: Dense quality from L2
    When label is "dense" and score is L2 distance <d> with configured maxL2Distance <maxL2Distance>
    Then qualityScore SHALL equal max(0, 1 - min(d, maxL2Distance) / maxL2Distance), that is <quality>

    Examples: the formula, its edges, and a null score
      | d       | maxL2Distance | quality |
      | 0       | 2             | 1       |
      | 0.5     | 2             | 0.75    |
      | 1       | 2             | 0.5     |
      | 1.999   | 2             | 0.0005  |
      | 2       | 2             | 0       |
      | 3.5     | 2             | 0       |
      | 1000    | 2             | 0       |
      | 1       | 4             | 0.75    |
      | 3       | 4             | 0.25    |
      | 0.3     | 0.6           | 0.5     |
      | 1.00008 | 2             | 0.49996 |
      | 2.4     | 4             | 0.4     |
      | 0.9     | 1.5           | 0.4     |
      | 0.0001  | 2             | 0.99995 |
      | null    | 2             | 0       |
      | null    | 4             | 0       |

  @id:hybrid-quality-from-rank @needs:quality @spec:d437d32a998f
  Scenario: Hybrid quality from rank
    When label is "hybrid" and originalRank is r within a candidate batch of size n, for every n from 1 to 50 and every r from 1 to n
    Then qualityScore SHALL be a monotonically non-increasing function of r over each batch
    And rank 1 SHALL map to 1.0 for every batch size n
    And the mapping SHALL NOT require dense L2 or RRF raw magnitude: with neither given it answered, and these RRF scores leave every qualityScore unchanged
      | RRF score |
      | 0.0327869 |
      | 0.0163934 |
      | 0.0009    |
      | 0.5       |
      | 1.0       |

  @id:quality-stays-within-0-and-1 @derived @needs:quality
  Scenario: Quality stays within 0 and 1
    When label is "hybrid" and originalRank is r within a candidate batch of size n, for every n from 1 to 50 and every r from 1 to n
    Then every qualityScore SHALL lie within [0, 1]

  @id:evidence-blocks-carry-the-normalizers-qualityscore @derived @needs:quality @needs:post_process
  Scenario Outline: Evidence blocks carry the single normalizer's qualityScore
    Given maxL2Distance is <maxL2>
    And these <label> candidates:
      | docId | chunkIndex | originalRank | score     | denseDistance | text                                     |
      | A     | 0          | 1            | <score A> | <dd A>        | The warranty covers parts for two years. |
      | B     | 0          | 2            | <score B> | <dd B>        | Returns are accepted within thirty days. |
      | C     | 0          | 3            | <score C> | <dd C>        | Shipping times vary by region.           |
    When post-process runs
    Then every candidate is accepted
    And each block's qualityScore SHALL equal the normalizer's qualityScore for the same candidate in a batch of 3

    Examples: one batch per label, legacy aliases, another maxL2Distance, denseDistance on all, some or none
      | label              | maxL2 | score A   | score B   | score C   | dd A | dd B | dd C |
      | dense              | 2     | 0.3       | 0.9       | 1.6       |      |      |      |
      | dense              | 4     | 0.3       | 0.9       | 3.6       |      |      |      |
      | l2_distance        | 2     | 0.3       | 0.9       | 2.5       |      |      |      |
      | l2_distance        | 0.6   | 0.1       | 0.3       | 0.55      |      |      |      |
      | hybrid             | 2     | 0.0327869 | 0.0322581 | 0.0317460 |      |      |      |
      | hybrid             | 2     | 0.0327869 | 0.0322581 | 0.0317460 | 1.2  | 0.4  | 0.8  |
      | hybrid             | 4     | 0.0327869 | 0.0322581 | 0.0317460 | 1.2  | 0.4  | 3.1  |
      | hybrid             | 2     | 0.0327869 | 0.0322581 | 0.0317460 | 1.2  |      | 0.8  |
      | rrf_fused          | 2     | 0.0327869 | 0.0322581 | 0.0317460 |      |      |      |
      | rrf_fused          | 0.6   | 0.0327869 | 0.0322581 | 0.0317460 | 0.3  | 0.1  | 0.5  |
      | bm25_only_no_dense | 2     | 0.0163934 | 0.0161290 | 0.0158730 |      |      |      |

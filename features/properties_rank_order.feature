@req:rank-order
Feature: Post-process SHALL preserve retrieval rank order
  "Evidence post-processing SHALL order candidates by `originalRank` ascending (stable tie-break
  allowed). It SHALL NOT re-order primarily by L0 domain/entity/keyword/source_type additive boosts."

  Universal statements of this requirement, checked by Hypothesis over generated batches: duplicates,
  chunks sharing a docId, tied ranks, dense and hybrid labels and legacy aliases, hybrid batches with and
  without denseDistance, in any input order. Ties may come in any order; which tied chunk a cap keeps
  may differ, the ranks it keeps may not.

  @id:prop-accepted-order-ascending-for-any-candidates-and-hints @property @derived @needs:post_process
  Scenario: For any candidates and any L0 hints, accepted blocks are in ascending originalRank
    Given any candidates in any input order, any L0 hints and any configuration
    Then the accepted blocks SHALL be in ascending originalRank

  @id:prop-caps-hold-and-keep-the-best-ranks @property @derived @needs:post_process
  Scenario: For any candidates and caps, dedup and caps hold and keep the best-ranked chunks
    Given any candidates in any input order, any L0 hints and any configuration
    Then each chunk SHALL be accepted once, the caps SHALL hold, and the best ranks SHALL be kept

  @id:prop-l0-hints-change-nothing-but-hit-reasons @property @derived @needs:post_process
  Scenario: For any candidates, changing the L0 hints changes nothing but hitReasons
    Given any candidates, any two sets of L0 hints and any configuration
    Then the accepted blocks, their qualityScores and the gates SHALL NOT change; only hitReasons may

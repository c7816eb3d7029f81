@req:no-l2-overwrite
Feature: Hybrid search SHALL NOT overwrite scores with dense L2 for post-process
  "When hybrid search runs, the store SHALL NOT replace hybrid hit scores with a parallel dense L2 map for
  the purpose of post-process thresholds, and SHALL NOT assign max-L2 weak placeholders under a
  `bm25_only_*` primary label."

  On the knowledge base generated per run (see the score-labels properties), hybrid searches of every
  shape: keyword queries whose keyword only some chunks hold, so BM25-only hits are common, and queries
  BM25 finds nothing for (blank, punctuation, words no text contains), where the fused order is the
  dense one and the fused scores are not.

  @id:prop-hybrid-scores-are-never-dense-l2-on-a-real-knowledge-base @property @derived @needs:search
  Scenario: For any hybrid search of a real knowledge base, no hit score is a dense L2 distance or a placeholder
    Given a knowledge base like a real team's, loaded into the implementation
    And any hybrid search of it
    Then no hybrid hit's score SHALL be its dense L2 distance or a max-L2 placeholder, and no hit SHALL be labelled bm25_only_no_dense

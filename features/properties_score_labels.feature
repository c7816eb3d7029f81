@req:score-labels
Feature: Primary score labels SHALL be only dense or hybrid
  "Knowledge search hits used by `lookup_knowledge` SHALL set `scoreLabel` to `dense` or `hybrid` (after
  any legacy alias canonicalization)."

  Universal statements of this requirement, on a knowledge base like a real team's, generated per run
  from the run's seed and loaded with the scenario corpus: documents of one chunk and of a dozen,
  category values with spaces, quotes, backslashes and other scripts, chunks without a category, texts in
  several scripts, chunks that tie. Requests come in every shape: a keyword, blank, punctuation only,
  long, quoted; a category that exists, one no chunk has, or none; k from 1 past a category's size; RRF k
  from 1 to 1000. Every reply is checked whole against the kit's own oracle, as in the scenarios: ties
  may come in any order, and a hybrid answer fused with another RRF k or larger sub-searches than the
  request's is noted, not failed (the spec names RRF, not its parameters).

  @id:prop-search-follows-its-mode-on-a-real-knowledge-base @property @derived @needs:search
  Scenario: For any search of a real knowledge base, hits follow the mode's retrieval and carry its label
    Given a knowledge base like a real team's, loaded into the implementation
    And any search of it: any query shape, category, k and RRF k, in either mode
    Then each hit SHALL carry the mode's label, dense hits SHALL be the nearest chunks with their L2 distance, and hybrid hits SHALL follow RRF via originalRank

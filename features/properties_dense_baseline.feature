@req:dense-baseline
Feature: Dense mode remains available for recall comparison
  "Configuration `retrieval.search.mode=dense` SHALL remain supported as a same-collection baseline that
  runs dense ANN only, without removing hybrid as the default production mode."

  On the knowledge base generated per run (see the score-labels properties), dense-mode searches of every
  shape, with a keyword the implementation could be tempted to search for. The kit's recording proxy sees
  every call the implementation makes to Milvus: each must be a dense ANN search, or the fetch of exactly
  the rows a dense search returned, by their primary keys.

  @id:prop-dense-mode-reads-dense-ann-only-on-a-real-knowledge-base @property @derived @needs:search
  Scenario: For any dense-mode search of a real knowledge base, Milvus is asked for dense ANN only
    Given a knowledge base like a real team's, loaded into the implementation
    And any dense-mode search of it
    Then Milvus SHALL be asked for dense ANN searches only

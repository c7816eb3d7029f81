@req:dense-baseline
Feature: Dense mode remains available for recall comparison
  "Configuration `retrieval.search.mode=dense` SHALL remain supported as a same-collection baseline that
  runs dense ANN only, without removing hybrid as the default production mode."

  Evidence that only dense ANN ran: the implementation reaches Milvus through the kit's recording proxy,
  which sees every call it makes; in dense mode (search and lookup alike) any data-reading call other than
  a dense ANN search (a hybrid, sparse, keyword or scalar query) fails. Black-box evidence as well: the question "failover" has a chunk that
  keyword search ranks first but that is not among its dense nearest neighbours. A dense-mode search that
  also ran keyword or hybrid search would return it, or return the neighbours in another order.

  @id:mode-dense-still-callable @needs:search @spec:f1e314ff4a89
  Scenario Outline: Mode dense still callable
    Given the kit's scenario corpus is loaded into the implementation
    When retrieval.search.mode is "dense" and the implementation searches the corpus for "<question>"
    Then search returns hits
    And each hit has a scoreLabel canonicalizing to "dense"
    And the hits are the dense nearest neighbours of the question, nearest first
    And the chunk that keyword search ranks first is not among the hits
    And Milvus was asked for dense ANN searches only: no hybrid search and no keyword search

    Examples:
      | question    |
      | failover    |
      | replication |

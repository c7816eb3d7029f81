@req:rank-order
Feature: Post-process SHALL preserve retrieval rank order
  "Evidence post-processing SHALL order candidates by `originalRank` ascending (stable tie-break
  allowed). It SHALL NOT re-order primarily by L0 domain/entity/keyword/source_type additive boosts."

  Candidate tables list the candidates in the order they are handed to post-process. Dense scores are
  L2 distances; hybrid scores are RRF scores of two lists, 2/(60+r). The kit checks the order of the
  accepted blocks, never which level names or numbers the implementation uses.

  @id:keyword-overlap-does-not-promote-lower-rank @needs:post_process @spec:dba1b5606d9c
  Scenario Outline: Keyword overlap does not promote lower rank
    Given candidate A has originalRank=1 and candidate B has originalRank=2 among these <label> candidates:
      | docId | chunkIndex | originalRank | score | text                                                                     |
      | B     | 0          | 2            | <B>   | Refund policy: a refund needs the invoice number printed on the invoice. |
      | A     | 0          | 1            | <A>   | How long does the warranty last on spare parts?                          |
      | C     | 0          | 3            | <C>   | Opening hours of the service desk.                                       |
      | D     | 0          | 4            | <D>   | Shipping times vary by region.                                           |
      | E     | 0          | 5            | <E>   | Gift cards cannot be exchanged for cash.                                 |
    And B matches more L0 keywords via string contains than A, with these L0 hints:
      | keywords | <keywords> |
    When post-process runs
    Then A SHALL appear before B among accepted blocks, subject only to dedup/caps removing one of them

    Examples: few and many keywords
      | label  | A         | B         | C         | D         | E         | keywords                                              |
      | dense  | 0.50      | 0.51      | 0.9       | 1.2       | 1.5       | refund, invoice, policy                               |
      | dense  | 0.50      | 0.51      | 0.9       | 1.2       | 1.5       | refund, invoice, policy, number, printed, needs, code |
      | hybrid | 0.0327869 | 0.0322581 | 0.0317460 | 0.0312500 | 0.0307692 | refund, invoice, policy                               |
      | hybrid | 0.0327869 | 0.0322581 | 0.0317460 | 0.0312500 | 0.0307692 | refund, invoice, policy, number, printed, needs, code |

  @id:structural-caps-still-apply-after-rank-order @needs:post_process @spec:7a8dec8a1b79
  Scenario Outline: Structural caps still apply after rank order
    Given rag.max-chunks-per-document is <cap> and rag.return-n is <return n>
    And these dense candidates, where more than <cap> chunks share docId "A":
      | docId | chunkIndex | originalRank | score | text                    |
      | A     | 0          | 5            | 0.9   | Warranty terms, part 1. |
      | A     | 1          | 1            | 0.2   | Warranty terms, part 2. |
      | B     | 0          | 2            | 0.3   | Returns policy.         |
      | A     | 2          | 3            | 0.4   | Warranty terms, part 3. |
      | A     | 3          | 6            | 0.05  | Warranty terms, part 4. |
      | C     | 0          | 4            | 0.6   | Repair centres.         |
      | D     | 0          | 7            | 1.2   | Shipping times.         |
      | E     | 0          | 8            | 1.4   | Gift cards.             |
    When post-process runs
    Then only the best-ranked (lowest originalRank) chunks of "A" up to the cap SHALL remain: originalRank <kept of A>
    And rag.return-n SHALL still bound total blocks
    And the accepted blocks SHALL keep originalRank order

    Examples: the best-scoring chunk of "A" is ranked 6th, so a cap always removes it
      | cap | return n | kept of A |
      | 2   | 4        | 1, 3      |
      | 1   | 3        | 1         |
      | 3   | 10       | 1, 3, 5   |
      | 2   | 2        | 1         |
      | 1   | 1        | 1         |
      | 3   | 4        | 1, 3      |

  @id:l0-hints-never-promote-lower-ranks @derived @needs:post_process
  Scenario Outline: L0 domain, entity, keyword and source-type hints never promote lower ranks
    Given these <label> candidates:
      | docId | chunkIndex | originalRank | score | sourceType | text                                                        |
      | E     | 0          | 5            | <E>   | faq        | Acme billing FAQ: refund, invoice and chargeback questions. |
      | C     | 0          | 3            | <C>   | faq        | Acme billing: refund deadlines.                             |
      | A     | 0          | 1            | <A>   | manual     | Warranty period for spare parts.                            |
      | D     | 0          | 4            | <D>   | faq        | Acme billing: invoice copies and refund status.             |
      | B     | 0          | 2            | <B>   | manual     | Opening hours of the service desk.                          |
    And L0 hints that the worse-ranked candidates match best:
      | domain     | billing    |
      | entities   | Acme       |
      | keywords   | <keywords> |
      | sourceType | faq        |
    When post-process runs
    Then the accepted blocks SHALL be, in order: A, B, C, D, E

    Examples: few and many keywords
      | label  | A         | B         | C         | D         | E         | keywords                                                  |
      | dense  | 0.50      | 0.51      | 0.52      | 0.53      | 0.54      | refund, invoice, chargeback                               |
      | dense  | 0.50      | 0.51      | 0.52      | 0.53      | 0.54      | refund, invoice, chargeback, questions, status, deadlines |
      | hybrid | 0.0327869 | 0.0322581 | 0.0317460 | 0.0312500 | 0.0307692 | refund, invoice, chargeback                               |
      | hybrid | 0.0327869 | 0.0322581 | 0.0317460 | 0.0312500 | 0.0307692 | refund, invoice, chargeback, questions, status, deadlines |

  @id:equal-ranks-may-come-in-either-order @derived @needs:post_process
  Scenario: Equal originalRanks may come in either order
    Given these hybrid candidates:
      | docId | chunkIndex | originalRank | score     | text                                     |
      | D     | 0          | 3            | 0.0317460 | Shipping times vary by region.           |
      | C     | 0          | 2            | 0.0322581 | Returns are accepted within thirty days. |
      | A     | 0          | 1            | 0.0327869 | The warranty covers parts for two years. |
      | B     | 0          | 2            | 0.0322581 | Refunds take five working days.          |
    When post-process runs
    Then every candidate is accepted
    And the accepted blocks SHALL keep originalRank order

  @id:a-chunk-retrieved-twice-is-accepted-once @derived @needs:post_process
  Scenario Outline: A chunk retrieved twice is accepted once
    Given rag.max-chunks-per-document is <cap> and rag.return-n is <return n>
    And these hybrid candidates:
      | docId | chunkIndex | originalRank | score     | text                                     |
      | A     | 0          | 1            | 0.0327869 | The warranty covers parts for two years. |
      | B     | 0          | 2            | 0.0322581 | Returns are accepted within thirty days. |
      | A     | 0          | 3            | 0.0317460 | The warranty covers parts for two years. |
      | A     | 1          | 4            | 0.0312500 | Spare parts are shipped within a week.   |
      | C     | 0          | 5            | 0.0307692 | Shipping times vary by region.           |
      | C     | 0          | 6            | 0.0303030 | Shipping times vary by region.           |
    When post-process runs
    Then no chunk SHALL be accepted twice
    And the accepted blocks SHALL keep originalRank order

    Examples: a second copy counts toward neither the cap nor return-n, and is dropped as a duplicate
      | cap | return n |
      | 2   | 5        |
      | 2   | 3        |
      | 1   | 5        |

"""Chunks tied in one sub-search of a hybrid answer may take each other's ranks there: their fused scores
move with the engine's order, so the judge takes either order (a reference run failed on two BM25-tied
chunks of the full-width query 'Ｋｂ № ﬁles ｚｅｎ' with RRF k 10000, where two ranks differ by 1e-8)."""

from conformance.judging._oracle import Ranked, rrf_fuse
from conformance.judging._spec_model import DENSE_TIE
from conformance.judging._truth import BM25_TIE, _fused_bounds, _overlapping

A, B, C, D = ("a", 0), ("b", 0), ("c", 0), ("d", 0)


def _truth_groups(dense: list[Ranked], bm25: list[Ranked], k: int, rrf_k: int):
    fused = rrf_fuse(([r.key for r in dense], [r.key for r in bm25]), rrf_k=rrf_k, limit=10)
    bounds = _fused_bounds(((dense, DENSE_TIE, False), (bm25, BM25_TIE, True)), k, rrf_k)
    groups, spill = _overlapping(fused, k, bounds)
    return [{fused[i].key for i in range(start, end)} for start, end in groups], {e.key for e in spill}


def test_two_chunks_tied_in_bm25_may_come_in_either_order() -> None:
    dense = [Ranked(C, 1, 0.1), Ranked(A, 2, 0.2), Ranked(B, 3, 0.3), Ranked(D, 4, 0.4)]
    bm25 = [Ranked(B, 1, 7.5), Ranked(A, 2, 7.5)]  # the same words: the same score, any order
    groups, _ = _truth_groups(dense, bm25, k=4, rrf_k=10000)
    assert {A, B} in groups


def test_without_a_tie_every_chunk_keeps_its_own_place() -> None:
    dense = [Ranked(C, 1, 0.1), Ranked(A, 2, 0.2), Ranked(B, 3, 0.3), Ranked(D, 4, 0.4)]
    bm25 = [Ranked(B, 1, 7.5), Ranked(A, 2, 7.25)]
    groups, spill = _truth_groups(dense, bm25, k=4, rrf_k=10000)
    assert all(len(group) == 1 for group in groups)
    assert spill == set()


def test_a_tie_across_the_sub_search_limit_lets_the_chunk_left_out_take_the_last_place() -> None:
    dense = [Ranked(A, 1, 0.1), Ranked(B, 2, 0.5), Ranked(C, 3, 0.5), Ranked(D, 4, 0.9)]
    bm25: list[Ranked] = []
    groups, _ = _truth_groups(dense[:2], bm25, k=2, rrf_k=60)
    assert groups == [{A}, {B}]  # the prefix alone knows nothing of C
    bounds = _fused_bounds(((dense, DENSE_TIE, False),), 2, 60)
    assert bounds[B][0] == 0.0  # tied with C across the limit: B may be the one cut

"""The executable model on hand-made search replies and dense mode's engine calls: the engine's answer
as the truth, and every freedom the spec leaves (ties, fused or fused-ordered scores). Lookups:
``test_spec_model_lookup.py``.
"""

from __future__ import annotations

from dataclasses import replace

from conformance.boundary._protocol import (
    Hit,
    SearchReply,
    SearchRequest,
)
from conformance.judging import _spec_model as model
from tests.unit.conformance.judging._model_cases import rules

# -- search ------------------------------------------------------------------------------------------------


DISTANCES = {("a", 0): 0.1, ("b", 0): 0.3, ("c", 0): 0.5, ("d", 0): 1.9}


def hit(doc: str, rank: int, score: float | None, label: str, dd: float | None = None) -> Hit:
    return Hit(
        doc_id=doc, chunk_index=0, original_rank=rank, score=score, score_label=label, dense_distance=dd
    )


def search(mode: str, rrf_k: int = 60) -> SearchRequest:
    return SearchRequest(query_text="q", query_vector=(1.0, 0.0), mode=mode, k=3, rrf_k=rrf_k)  # type: ignore[arg-type]


DENSE_TRUTH = model.SearchTruth(
    tuple(model.Expected(k, DISTANCES[k]) for k in [("a", 0), ("b", 0), ("c", 0)]), DISTANCES
)
# fused: c is BM25-only and ranks second; order differs from the dense order.
HYBRID_TRUTH = model.SearchTruth(
    (model.Expected(("a", 0), 0.0325), model.Expected(("d", 0), 0.0164), model.Expected(("b", 0), 0.0161)),
    DISTANCES,
    frozenset({("d", 0)}),
)


def test_dense_hits_are_the_nearest_with_their_squared_l2() -> None:
    good = SearchReply(hits=(hit("a", 1, 0.1, "dense"), hit("b", 2, 0.3, "dense"), hit("c", 3, 0.5, "dense")))
    assert model.check_search(search("dense"), good, DENSE_TRUTH) == []
    alias = SearchReply(hits=(good.hits[0], good.hits[1].model_copy(update={"score_label": "l2_distance"})))
    assert "emitted-alias" in rules(model.check_search(search("dense"), alias, DENSE_TRUTH))
    euclid = SearchReply(hits=tuple(h.model_copy(update={"score": h.score**0.5}) for h in good.hits))
    assert rules(model.check_search(search("dense"), euclid, DENSE_TRUTH)) == {"dense-score"}
    zero_based = SearchReply(
        hits=tuple(h.model_copy(update={"original_rank": h.original_rank - 1}) for h in good.hits)
    )
    assert "ranks" in rules(model.check_search(search("dense"), zero_based, DENSE_TRUTH))
    extra = SearchReply(hits=(*good.hits, hit("d", 4, 1.9, "dense")))
    assert rules(model.check_search(search("dense"), extra, DENSE_TRUTH)) == {"dense-hits"}


def test_hybrid_hits_follow_rrf_and_keep_fused_or_fused_ordered_scores() -> None:
    fused = (
        hit("a", 1, 0.0325, "hybrid", 0.1),
        hit("d", 2, 0.0164, "hybrid", 1.9),
        hit("b", 3, 0.0161, "hybrid"),
    )
    assert model.check_search(search("hybrid"), SearchReply(hits=fused), HYBRID_TRUTH) == []
    reversed_scale = tuple(h.model_copy(update={"score": -h.score}) for h in fused)
    found = model.check_search(search("hybrid"), SearchReply(hits=reversed_scale), HYBRID_TRUTH)
    assert rules(found) == {"hybrid-score-scale"}  # another scale than the fused one: noted
    assert model.failing(found) == []
    scaled = tuple(h.model_copy(update={"score": h.score * 100}) for h in fused)
    assert model.check_search(search("hybrid"), SearchReply(hits=scaled), HYBRID_TRUTH) == []
    no_score = tuple(h.model_copy(update={"score": None}) for h in fused)
    assert model.check_search(search("hybrid"), SearchReply(hits=no_score), HYBRID_TRUTH) == []
    from_distance = tuple(h.model_copy(update={"score": 1 / (1 + DISTANCES[(h.doc_id, 0)])}) for h in fused)
    assert rules(model.check_search(search("hybrid"), SearchReply(hits=from_distance), HYBRID_TRUTH)) == {
        "hybrid-score"
    }
    placeholder = (fused[0], fused[1].model_copy(update={"score": 2.0}), fused[2])
    assert rules(model.check_search(search("hybrid"), SearchReply(hits=placeholder), HYBRID_TRUTH)) == {
        "no-placeholder"
    }
    distance_placeholder = (fused[0], fused[1].model_copy(update={"dense_distance": 4.0}), fused[2])
    found = model.check_search(search("hybrid"), SearchReply(hits=distance_placeholder), HYBRID_TRUTH)
    assert rules(found) == {"no-placeholder", "dense-distance-value"}  # R2's placeholder, R7's distance
    as_dense = (fused[0].model_copy(update={"score_label": "dense"}), *fused[1:])
    assert rules(model.check_search(search("hybrid"), SearchReply(hits=as_dense), HYBRID_TRUTH)) == {
        "dense-distance-label"
    }
    bm25_only = (fused[0], fused[1].model_copy(update={"score_label": "bm25_only_no_dense"}), fused[2])
    assert rules(model.check_search(search("hybrid"), SearchReply(hits=bm25_only), HYBRID_TRUTH)) == {
        "no-bm25-only-label",  # R2 names the label on new hits
        "emitted-alias",  # R1 names it among those no new emission carries
    }
    by_leg = (
        fused[0].model_copy(update={"score_label": "dense"}),
        fused[1],
        fused[2].model_copy(update={"score_label": "dense"}),
    )
    assert rules(model.check_search(search("hybrid"), SearchReply(hits=by_leg), HYBRID_TRUTH)) == {
        "hit-label"  # a hit without denseDistance mislabelled too: the distance explains nothing (R1)
    }
    wrong_distance = (fused[0].model_copy(update={"dense_distance": 0.1**0.5}), *fused[1:])
    assert rules(model.check_search(search("hybrid"), SearchReply(hits=wrong_distance), HYBRID_TRUTH)) == {
        "dense-distance-value"
    }
    by_distance = (
        fused[0],
        fused[2].model_copy(update={"original_rank": 2}),
        fused[1].model_copy(update={"original_rank": 3}),
    )
    assert "hybrid-order" in rules(
        model.check_search(search("hybrid"), SearchReply(hits=by_distance), HYBRID_TRUTH)
    )
    attached = fused[2].model_copy(update={"dense_distance": 0.3})
    sorted_by_attached = (
        fused[0],
        attached.model_copy(update={"original_rank": 2}),
        fused[1].model_copy(update={"original_rank": 3}),
    )
    found = model.check_search(search("hybrid"), SearchReply(hits=sorted_by_attached), HYBRID_TRUTH)
    assert rules(found) == {"dense-distance-order"}  # the attached distance moved them: R7's sentence
    against_attached = (  # moved, but not by the distances they carry: R1's hybrid order
        fused[0],
        attached.model_copy(update={"original_rank": 2, "dense_distance": 2.5}),
        fused[1].model_copy(update={"original_rank": 3}),
    )
    found = model.check_search(search("hybrid"), SearchReply(hits=against_attached), HYBRID_TRUTH)
    assert "hybrid-order" in rules(found)
    assert "dense-distance-order" not in rules(found)


def test_a_hybrid_answer_that_is_the_dense_leg_alone_is_the_hybrid_queries_fault() -> None:
    """The RRF answer's chunks in ascending L2, with denseDistance attached: a reorder by that distance,
    R7's; unless the dense sub-search alone gives exactly that answer, as though BM25 were asked nothing
    (a cut-short query text): then the hybrid query is at fault, R1's hybrid order (readings 18)."""
    fused = [("a", 0), ("c", 0), ("b", 0)]  # BM25 moved c above b; the dense leg at limit 3 is a, b, c
    truth = model.SearchTruth(
        tuple(model.Expected(k, s) for k, s in zip(fused, (0.0325, 0.0322, 0.0320), strict=True)),
        DISTANCES,
    )
    in_l2_order = tuple(
        hit(doc, rank, 0.03, "hybrid", dd=DISTANCES[(doc, 0)]) for rank, doc in enumerate("abc", start=1)
    )
    reordered = model.check_search(search("hybrid"), SearchReply(hits=in_l2_order), truth)
    assert rules(reordered) == {"dense-distance-order"}
    dense_leg = replace(truth, dense_leg=(("a", 0), ("b", 0), ("c", 0)))
    found = model.check_search(search("hybrid"), SearchReply(hits=in_l2_order), dense_leg)
    assert rules(found) == {"hybrid-order"}
    assert "the dense search's alone" in str(found[0].expected)


def test_a_reversed_fused_scale_is_not_a_function_of_the_distance_across_a_near_tie() -> None:
    """Negated fused scores where one both-legs hit lies a hair (within the distance tolerance) from a
    dense-only hit: compared only with its neighbours in distance order, the rest read as rising with the
    distance; compared with every hit, it is not (selftest seed 258532458 found this at rrfK 10000)."""
    dense_only = [(f"n{i}", 0.1 * (i + 1)) for i in range(5)]  # fused order = dense order among these
    both = ("top", dense_only[-1][1] + 1e-5)  # fused first, dense last, 1e-5 from its dense neighbour
    distances = {(doc, 0): d for doc, d in [*dense_only, both]}
    ranked = [both[0], *(doc for doc, _ in dense_only)]
    scores = [2 / 10_001, *(1 / (10_001 + i) for i in range(1, 6))]
    truth = model.SearchTruth(
        tuple(model.Expected((doc, 0), s) for doc, s in zip(ranked, scores, strict=True)), distances
    )
    negated = tuple(
        hit(doc, rank, -score, "hybrid")
        for rank, (doc, score) in enumerate(zip(ranked, scores, strict=True), start=1)
    )
    found = model.check_search(search("hybrid", rrf_k=10_000), SearchReply(hits=negated), truth)
    assert rules(found) == {"hybrid-score-scale"}  # another scale: noted, not R2's dense L2
    from_distance = tuple(h.model_copy(update={"score": distances[(h.doc_id, 0)]}) for h in negated)
    found = model.check_search(search("hybrid", rrf_k=10_000), SearchReply(hits=from_distance), truth)
    assert "hybrid-score" in rules(found)  # the scores are the distance itself: still caught


def test_tied_expected_scores_may_come_in_either_order() -> None:
    tied = model.SearchTruth((model.Expected(("a", 0), 0.5), model.Expected(("b", 0), 0.5)), DISTANCES)
    reply = SearchReply(hits=(hit("b", 1, 0.5, "hybrid"), hit("a", 2, 0.5, "hybrid")))
    assert model.check_search(search("hybrid"), reply, tied) == []


class _Target:
    def __init__(self, kind: str) -> None:
        self.kind = kind


class _Call:
    def __init__(
        self,
        method: str,
        *kinds: str,
        expr: str | None = None,
        keys: tuple[object, ...] | None = None,
        collection: str = "c",
    ) -> None:
        self.method = method
        self.searches = tuple(_Target(k) for k in kinds)
        self.collection = collection
        self.expr = expr
        self.result_keys = keys
        self.primary_field = "pk" if keys is not None else None

    def describe(self) -> str:
        return f"{self.method}({', '.join(t.kind for t in self.searches)})"


def test_dense_mode_reads_data_only_through_dense_ann() -> None:
    assert model.check_dense_only([_Call("DescribeCollection"), _Call("Search", "dense")], "calls") == []
    assert rules(model.check_dense_only([_Call("Search", "dense"), _Call("Query")], "calls")) == {
        "dense-only"
    }
    assert rules(model.check_dense_only([_Call("Search", "text")], "calls")) == {"dense-only"}
    assert rules(model.check_dense_only([_Call("HybridSearch", "dense", "text")], "calls")) == {"dense-only"}
    assert rules(model.check_dense_only([_Call("LoadCollection")], "calls")) == {"dense-only"}
    # A repeat of a search that reached Milvus before may be answered from memory: no call is no other
    # kind of call. Any call it does make is still judged.
    assert model.check_dense_only([], "calls", repeated=True) == []
    assert rules(model.check_dense_only([_Call("Search", "text")], "calls", repeated=True)) == {"dense-only"}
    # An empty answer where the dense search's is empty too (a category no chunk carries) may be known
    # without asking (the implementation's partitions); a call it makes is still judged.
    assert model.check_dense_only([_Call("HasPartition")], "calls", known_empty=True) == []
    assert rules(model.check_dense_only([_Call("Query")], "calls", known_empty=True)) == {"dense-only"}
    assert rules(model.check_dense_only([], "calls")) == {"dense-only"}


def test_fetching_exactly_the_dense_hits_by_primary_key_is_hydration() -> None:
    searched = _Call("Search", "dense", keys=(4, 9))
    assert model.check_dense_only([searched, _Call("Query", expr="pk in [4, 9]")], "calls") == []
    assert model.check_dense_only([searched, _Call("Query", expr="pk == 9")], "calls") == []
    named = _Call("Search", "dense", keys=("a#0", "b'1"))
    assert model.check_dense_only([named, _Call("Query", expr="pk in ['a#0', \"b'1\"]")], "calls") == []
    for retrieval in ("pk in [4, 10]", "pk > 3", "doc_id in ['x']", "pk in [4] or pk > 0", ""):
        calls = [searched, _Call("Query", expr=retrieval)]
        assert rules(model.check_dense_only(calls, "calls")) == {"dense-only"}, retrieval
    other_collection = _Call("Query", expr="pk in [4]", collection="other")
    assert rules(model.check_dense_only([searched, other_collection], "calls")) == {"dense-only"}
    before_the_search = [_Call("Query", expr="pk in [4]"), searched]
    assert rules(model.check_dense_only(before_the_search, "calls")) == {"dense-only"}


def test_dense_mode_searches_the_collection_hybrid_mode_searches() -> None:
    same = _Call("Search", "dense", keys=(1,), collection="kb")
    assert model.check_dense_only([same], "calls", hybrid_collections=frozenset({"kb"})) == []
    shadow = _Call("Search", "dense", keys=(1,), collection="kb_dense_copy")
    found = model.check_dense_only([shadow], "calls", hybrid_collections=frozenset({"kb"}))
    assert rules(found) == {"dense-only"}
    assert "same-collection" in found[0].expected
    assert model.check_dense_only([shadow], "calls") == []  # hybrid mode unknown: nothing to compare


def test_a_hybrid_hit_relabelled_l2_distance_is_the_legacy_backfill_too() -> None:
    relabelled = (hit("a", 1, 0.1, "l2_distance", 0.1), *HYBRID_HITS[1:])
    found = model.check_search(search("hybrid"), SearchReply(hits=relabelled), HYBRID_TRUTH)
    assert {"l2-relabel", "dense-distance-label"} <= rules(found)  # R2, and R7 (it carries a distance)


HYBRID_HITS = (
    hit("a", 1, 0.0325, "hybrid", 0.1),
    hit("d", 2, 0.0164, "hybrid", 1.9),
    hit("b", 3, 0.0161, "hybrid"),
)

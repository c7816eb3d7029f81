"""Steps about search against the kit's corpus: labels, scores and order of dense and hybrid hits.

Every expectation comes from the kit's oracle (brute-force squared L2, RRF fused here from the engine's
separate dense and BM25 answers), never from the implementation under judgement.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

from pytest_bdd import given, parsers, then, when

from ...boundary._errors import ConformanceError
from ...boundary._protocol import Hit, SearchReply, SearchRequest
from ...corpus._scenario_corpus import RRF_K, ChunkKey, ScenarioCorpus, ScenarioQuery, key_of
from ...engines._proxy import RecordedCall
from ...judging._judge import Judge
from ...judging._oracle import MilvusOracle, Ranked
from ...judging._spec_model import (
    DISTANCE_TOLERANCE,
    SearchTruth,
    SpecViolationError,
    canonical,
    check_dense_only,
    check_search,
    expect,
)
from ...judging._truth import hybrid_alternatives, search_truth

__all__ = ["Mode", "Searched", "assert_follows_ranking", "parse_mode", "run_search", "show_key"]

Mode = Literal["dense", "hybrid"]

# The legacy store's "weak placeholder" for BM25-only hits was maxL2Distance: for unit vectors 2 under
# the design note's Euclidean reading, 4 under Milvus's squared L2 (readings 2). A fused score is
# at most 2 / (rrf_k + 1), so a conforming hybrid score never equals either.
_MAX_L2_PLACEHOLDERS = (2.0, 4.0)


@dataclass(frozen=True)
class Searched:
    """One search the scenario asked for, and the implementation's reply."""

    question: ScenarioQuery
    mode: Mode
    reply: SearchReply
    milvus_calls: tuple[RecordedCall, ...] = ()
    rrf_k: int = RRF_K
    category: str | None = None
    repeated: bool = False  # the same dense search reached Milvus earlier in the run (a cache may answer)

    @property
    def request(self) -> SearchRequest:
        return SearchRequest(
            query_text=self.question.text,
            query_vector=self.question.vector,
            mode=self.mode,
            k=self.question.k,
            category=self.category,
            rrf_k=self.rrf_k,
        )

    @property
    def by_rank(self) -> list[Hit]:
        return sorted(self.reply.hits, key=lambda hit: hit.original_rank)


def parse_mode(mode: str) -> Mode:
    """A feature file's mode, checked: the spec has exactly two."""
    if mode == "dense":
        return "dense"
    if mode == "hybrid":
        return "hybrid"
    raise ConformanceError(f"kit bug: the feature asks for mode {mode!r}; the spec has dense and hybrid")


def show_key(key: ChunkKey) -> str:
    return f"{key[0]}#{key[1]}"


def assert_follows_ranking(got: list[ChunkKey], expected: list[Ranked], what: str) -> None:
    """``got`` must be ``expected``'s order; chunks with equal expected scores may come in any order."""
    shown_got = [show_key(k) for k in got]
    shown_expected = [show_key(r.key) for r in expected]
    assert len(got) == len(expected), (
        f"{what}: expected {len(expected)} chunks {shown_expected}, the implementation gave "
        f"{len(got)}: {shown_got}"
    )
    start = 0
    while start < len(expected):
        end = start + 1
        while end < len(expected) and abs(expected[end].score - expected[start].score) <= 1e-12:
            end += 1  # a tie: engines order tied chunks differently, compare the group as a set
        want = {r.key for r in expected[start:end]}
        assert set(got[start:end]) == want, (
            f"{what}: expected {shown_expected}, the implementation gave {shown_got} "
            f"(first difference at position {start + 1})"
        )
        start = end


@given("the kit's scenario corpus is loaded into the implementation")
def _(rqs_corpus: ScenarioCorpus) -> None:
    """The session fixture loads it once; this step makes the precondition readable."""


@given(parsers.parse('the hybrid/RRF order for "{question}" differs from its dense L2 order'))
def _(rqs_oracle: MilvusOracle, rqs_scenario_corpus: ScenarioCorpus, question: str) -> None:
    query = rqs_scenario_corpus.query(question)
    fused = [r.key for r in rqs_oracle.rrf(query.vector, query.text, query.k)]
    distances = rqs_oracle.l2(query.vector)
    if fused == sorted(fused, key=lambda key: distances[key]):
        raise ConformanceError(
            f"kit bug: the corpus question {question!r} does not separate RRF from L2 order"
        )


@when(
    parsers.parse(
        'retrieval.search.mode is "{mode}" and the implementation searches the corpus for "{question}"'
    ),
    target_fixture="searched",
)
def _(rqs_judge: Judge, rqs_corpus: ScenarioCorpus, mode: str, question: str) -> Searched:
    return run_search(rqs_judge, rqs_corpus.query(question), mode)


@when(
    parsers.parse(
        'retrieval.search.mode is "hybrid" with RRF k {rrf_k:d} and the implementation searches the corpus '
        'for "{question}"'
    ),
    target_fixture="searched",
)
def _(rqs_judge: Judge, rqs_corpus: ScenarioCorpus, rrf_k: int, question: str) -> Searched:
    return run_search(rqs_judge, rqs_corpus.query(question), "hybrid", rrf_k=rrf_k)


@when(
    parsers.parse(
        'retrieval.search.mode is "{mode}" and the implementation searches category "{category}" '
        'for "{question}"'
    ),
    target_fixture="searched",
)
def _(rqs_judge: Judge, rqs_corpus: ScenarioCorpus, mode: str, category: str, question: str) -> Searched:
    return run_search(rqs_judge, rqs_corpus.query(question), mode, category=category)


def run_search(
    judge: Judge, query: ScenarioQuery, mode: str, *, rrf_k: int = RRF_K, category: str | None = None
) -> Searched:
    """Ask one search through the judge, which checks the whole reply and what reached Milvus."""
    checked = parse_mode(mode)
    request = SearchRequest(
        query_text=query.text,
        query_vector=query.vector,
        mode=checked,
        k=query.k,
        category=category,
        rrf_k=rrf_k,
    )
    repeated = checked == "dense" and judge.dense_asked_before(request)
    reply, calls = judge.search(request)
    return Searched(
        question=query,
        mode=checked,
        reply=reply,
        milvus_calls=calls,
        rrf_k=rrf_k,
        category=category,
        repeated=repeated,
    )


@then("Milvus was asked for dense ANN searches only: no hybrid search and no keyword search")
def _(searched: Searched) -> None:
    problems = check_dense_only(
        searched.milvus_calls, "the engine calls of this dense-mode search", repeated=searched.repeated
    )
    assert not problems, "\n".join(map(str, problems))


@then("search returns hits")
def _(searched: Searched) -> None:
    assert searched.reply.hits, (
        f"the corpus holds matches for {searched.question.name!r}; the implementation's {searched.mode} "
        "search returned no hits"
    )


@then(parsers.parse('every hit belongs to category "{category}"'))
def _(searched: Searched, rqs_corpus: ScenarioCorpus, category: str) -> None:
    outside = [show_key(key_of(h)) for h in searched.by_rank if rqs_corpus.category_of(key_of(h)) != category]
    expect(
        not outside,
        "category-filter",
        f"a {searched.mode} search filtered by category {category!r}",
        "chunks of that category only",
        f"{outside} from other categories",
    )


@then(parsers.parse('each hit has a scoreLabel canonicalizing to "{label}"'))
def _(searched: Searched, label: str) -> None:
    wrong = [
        f"{show_key(key_of(h))}: {h.score_label!r}"
        for h in searched.by_rank
        if canonical(h.score_label) != label
    ]
    expect(not wrong, "hit-label", f"{searched.mode} hits", f"labels canonicalizing to {label!r}", str(wrong))


@then("each hit's score is the dense L2 distance of its chunk")
def _(searched: Searched, rqs_oracle: MilvusOracle) -> None:
    query = searched.question
    distances = rqs_oracle.l2(query.vector)
    # readings 1: the engine's own distance for the hit, which is also the brute-force squared L2.
    engine = {r.key: r.score for r in rqs_oracle.dense_search(query.vector, len(distances))}
    for hit in searched.by_rank:
        want = distances[key_of(hit)]
        if abs(engine[key_of(hit)] - want) > DISTANCE_TOLERANCE:
            raise ConformanceError(f"the engine's L2 for {show_key(key_of(hit))} is not brute-force L2")
        score = hit.score if hit.score is not None else float("nan")  # nan fails the comparison below
        expect(
            abs(score - want) <= DISTANCE_TOLERANCE,
            "dense-score",
            f"dense hit {show_key(key_of(hit))}",
            f"its squared L2 distance {want:.6f}",
            repr(hit.score),
        )


@then("originalRank orders the hits by ascending dense L2 distance")
def _(searched: Searched, rqs_oracle: MilvusOracle) -> None:
    _expect_order(searched, search_truth(rqs_oracle, searched.request))


@then("the hits are the dense nearest neighbours of the question, nearest first")
def _(searched: Searched, rqs_oracle: MilvusOracle) -> None:
    _expect_order(searched, search_truth(rqs_oracle, searched.request))


@then("the chunk that keyword search ranks first is not among the hits")
def _(searched: Searched, rqs_oracle: MilvusOracle) -> None:
    query = searched.question
    bm25_first = rqs_oracle.bm25_search(query.text, query.k)[0].key
    if bm25_first in {r.key for r in rqs_oracle.l2_order(query.vector)[: query.k]}:
        raise ConformanceError(f"kit bug: BM25's first chunk for {query.name!r} is also a dense neighbour")
    found = [key_of(h) for h in searched.reply.hits]
    expect(
        bm25_first not in found,
        "dense-hits",
        f"dense hits for {query.name!r}",
        f"no {show_key(bm25_first)} (what keyword search ranks first; no dense neighbour)",
        str([show_key(k) for k in found]),
    )


@then("hit order follows the hybrid/RRF result order via originalRank")
def _(searched: Searched, rqs_oracle: MilvusOracle) -> None:
    # RRF with another k or larger sub-searches than the request's is the judge's note, not a failure.
    truths = [search_truth(rqs_oracle, searched.request)]
    truths += [truth for _, truth in hybrid_alternatives(rqs_oracle, searched.request)]
    _expect_order(searched, *truths)


def _expect_order(searched: Searched, *truths: SearchTruth) -> None:
    """The hits' order against the oracle's (any of ``truths``): the model's order rules only."""
    first: list[Any] = []
    for truth in truths:
        found = [
            v
            for v in check_search(searched.request, searched.reply, truth)
            if v.rule.id in ("ranks", "dense-hits", "hybrid-order")
        ]
        if not found:
            return
        first = first or found
    raise SpecViolationError("search reply", first)


@then("any denseDistance attached to a hit is the dense L2 distance of its chunk")
def _(searched: Searched, rqs_oracle: MilvusOracle) -> None:
    distances = rqs_oracle.l2(searched.question.vector)
    for hit in searched.by_rank:
        if hit.dense_distance is None:
            continue  # optional (the spec: "MAY use optional dense distance")
        want = distances[key_of(hit)]
        expect(
            abs(hit.dense_distance - want) <= DISTANCE_TOLERANCE,
            "dense-distance-value",
            f"hit {show_key(key_of(hit))}",
            f"its dense L2 distance {want:.6f}",
            repr(hit.dense_distance),
        )


@then("the hits include the chunk that only keyword search finds")
def _(searched: Searched, rqs_oracle: MilvusOracle) -> None:
    only = _bm25_only(searched.question, rqs_oracle)
    found = {key_of(h) for h in searched.reply.hits}
    expect(
        only <= found,
        "hybrid-order",
        "hybrid hits",
        f"the BM25-only chunks {[show_key(k) for k in sorted(only)]} fused in",
        str([show_key(k) for k in sorted(found)]),
    )


@then("no hit's score is forced to its dense L2 distance")
def _(searched: Searched, rqs_oracle: MilvusOracle) -> None:
    distances = rqs_oracle.l2(searched.question.vector)
    forced = [
        f"{show_key(key_of(h))}: score {h.score!r}, L2 {distances[key_of(h)]:.6f}"
        for h in searched.by_rank
        if h.score is not None and abs(h.score - distances[key_of(h)]) <= DISTANCE_TOLERANCE
    ]
    expect(not forced, "hybrid-score", "hybrid hit scores", "never their dense L2 distance", str(forced))


@then("the chunk that only keyword search finds is not given a max-L2 placeholder score")
def _(searched: Searched, rqs_oracle: MilvusOracle) -> None:
    only = _bm25_only(searched.question, rqs_oracle)
    for hit in searched.reply.hits:
        if key_of(hit) in only and hit.score is not None:
            expect(
                all(abs(hit.score - p) > DISTANCE_TOLERANCE for p in _MAX_L2_PLACEHOLDERS),
                "no-placeholder",
                f"BM25-only hit {show_key(key_of(hit))}",
                "its fused score",
                f"{hit.score!r}, a max-L2 placeholder",
            )


@then(parsers.parse('no hit carries the primary score label "{label}"'))
def _(searched: Searched, label: str) -> None:
    carrying = [show_key(key_of(h)) for h in searched.reply.hits if h.score_label == label]
    expect(not carrying, "no-bm25-only-label", "hybrid hits", f"none labelled {label!r}", str(carrying))


def _bm25_only(query: ScenarioQuery, oracle: MilvusOracle) -> set[ChunkKey]:
    dense = {r.key for r in oracle.dense_search(query.vector, query.k)}
    only = {r.key for r in oracle.rrf(query.vector, query.text, query.k)} - dense
    if not only:
        raise ConformanceError(f"kit bug: the corpus question {query.name!r} has no BM25-only hybrid hit")
    return only

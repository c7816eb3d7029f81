"""Steps about search against the kit's corpus: labels, scores and order of dense and hybrid hits.

Every expectation comes from the kit's oracle (brute-force squared L2, RRF fused here from the engine's
separate dense and BM25 answers), never from the implementation under judgement.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from pytest_bdd import given, parsers, then, when

from .._corpus import RRF_K, ChunkKey, ScenarioCorpus, ScenarioQuery, key_of
from .._errors import ConformanceError
from .._judge import Judge
from .._model import check_dense_only
from .._oracle import FLOAT32_TOLERANCE, MilvusOracle, Ranked
from .._protocol import Hit, SearchReply, SearchRequest
from ..engines._proxy import RecordedCall
from .labels import kit_canonical

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
    reply, calls = judge.search(request)
    return Searched(question=query, mode=checked, reply=reply, milvus_calls=calls, rrf_k=rrf_k)


@then("Milvus was asked for dense ANN searches only: no hybrid search and no keyword search")
def _(searched: Searched) -> None:
    problems = check_dense_only(searched.milvus_calls, "the engine calls of this dense-mode search")
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
    assert not outside, (
        f"a search filtered by category {category!r} SHALL return chunks of that category only; the "
        f"implementation returned {outside} from other categories"
    )


@then(parsers.parse('each hit has a scoreLabel canonicalizing to "{label}"'))
def _(searched: Searched, label: str) -> None:
    wrong = [
        f"{show_key(key_of(h))}: {h.score_label!r}"
        for h in searched.by_rank
        if kit_canonical(h.score_label) != label
    ]
    assert not wrong, (
        f"the spec requires every {searched.mode} hit's scoreLabel to canonicalize to {label!r} "
        f"(canonical labels and the legacy aliases only); the implementation labelled {wrong}"
    )


@then("each hit's score is the dense L2 distance of its chunk")
def _(searched: Searched, rqs_oracle: MilvusOracle) -> None:
    query = searched.question
    distances = rqs_oracle.l2(query.vector)
    # readings 1: the engine's own distance for the hit, which is also the brute-force squared L2.
    engine = {r.key: r.score for r in rqs_oracle.dense_search(query.vector, len(distances))}
    for hit in searched.by_rank:
        want = distances[key_of(hit)]
        if abs(engine[key_of(hit)] - want) > FLOAT32_TOLERANCE:
            raise ConformanceError(f"the engine's L2 for {show_key(key_of(hit))} is not brute-force L2")
        score = hit.score if hit.score is not None else float("nan")  # nan fails the comparison below
        assert abs(score - want) <= FLOAT32_TOLERANCE, (
            f"the spec requires a dense hit's score to be its dense L2 distance (Milvus reports squared "
            f"L2): {show_key(key_of(hit))} is at {want:.6f}, the implementation scored it {hit.score!r}"
        )


@then("originalRank orders the hits by ascending dense L2 distance")
def _(searched: Searched, rqs_oracle: MilvusOracle) -> None:
    ranks = [h.original_rank for h in searched.by_rank]
    assert ranks == list(range(1, len(ranks) + 1)), f"originalRank must run 1..n, got {ranks}"
    nearest = rqs_oracle.l2_order(searched.question.vector)[: len(ranks)]
    assert_follows_ranking(
        [key_of(h) for h in searched.by_rank], nearest, "dense hits by originalRank vs ascending L2"
    )


@then("the hits are the dense nearest neighbours of the question, nearest first")
def _(searched: Searched, rqs_oracle: MilvusOracle) -> None:
    nearest = rqs_oracle.l2_order(searched.question.vector)[: searched.question.k]
    assert_follows_ranking(
        [key_of(h) for h in searched.by_rank],
        nearest,
        f"dense mode must run dense ANN only: the {searched.question.k} nearest chunks",
    )


@then("the chunk that keyword search ranks first is not among the hits")
def _(searched: Searched, rqs_oracle: MilvusOracle) -> None:
    query = searched.question
    bm25_first = rqs_oracle.bm25_search(query.text, query.k)[0].key
    if bm25_first in {r.key for r in rqs_oracle.l2_order(query.vector)[: query.k]}:
        raise ConformanceError(f"kit bug: BM25's first chunk for {query.name!r} is also a dense neighbour")
    found = [key_of(h) for h in searched.reply.hits]
    assert bm25_first not in found, (
        f"the spec requires mode dense to call dense ANN only; {show_key(bm25_first)} is what keyword "
        f"search ranks first and is no dense neighbour, yet the implementation returned it: "
        f"{[show_key(k) for k in found]}"
    )


@then("hit order follows the hybrid/RRF result order via originalRank")
def _(searched: Searched, rqs_oracle: MilvusOracle) -> None:
    query = searched.question
    ranks = [h.original_rank for h in searched.by_rank]
    assert ranks == list(range(1, len(ranks) + 1)), f"originalRank must run 1..n, got {ranks}"
    fused = rqs_oracle.rrf(query.vector, query.text, query.k, rrf_k=searched.rrf_k)
    assert_follows_ranking(
        [key_of(h) for h in searched.by_rank],
        fused,
        f"hybrid hits by originalRank vs RRF (k={searched.rrf_k}) of separate dense and BM25 searches at "
        f"limit {query.k}",
    )


@then("any denseDistance attached to a hit is the dense L2 distance of its chunk")
def _(searched: Searched, rqs_oracle: MilvusOracle) -> None:
    distances = rqs_oracle.l2(searched.question.vector)
    for hit in searched.by_rank:
        if hit.dense_distance is None:
            continue  # optional (the spec: "MAY use optional dense distance")
        want = distances[key_of(hit)]
        assert abs(hit.dense_distance - want) <= FLOAT32_TOLERANCE, (
            f"an attached denseDistance must be the chunk's dense L2 distance: {show_key(key_of(hit))} is "
            f"at {want:.6f}, the implementation attached {hit.dense_distance!r}"
        )


@then("the hits include the chunk that only keyword search finds")
def _(searched: Searched, rqs_oracle: MilvusOracle) -> None:
    only = _bm25_only(searched.question, rqs_oracle)
    found = {key_of(h) for h in searched.reply.hits}
    assert only <= found, (
        f"hybrid search must fuse BM25 hits in: {[show_key(k) for k in sorted(only)]} rank high in RRF "
        f"but the implementation returned {[show_key(k) for k in sorted(found)]}"
    )


@then("no hit's score is forced to its dense L2 distance")
def _(searched: Searched, rqs_oracle: MilvusOracle) -> None:
    distances = rqs_oracle.l2(searched.question.vector)
    forced = [
        f"{show_key(key_of(h))}: score {h.score!r}, L2 {distances[key_of(h)]:.6f}"
        for h in searched.by_rank
        if h.score is not None and abs(h.score - distances[key_of(h)]) <= FLOAT32_TOLERANCE
    ]
    assert not forced, (
        "the spec forbids replacing hybrid hit scores with dense L2 for post-process thresholds; "
        f"these hybrid hits carry their L2 distance as score: {forced}"
    )


@then("the chunk that only keyword search finds is not given a max-L2 placeholder score")
def _(searched: Searched, rqs_oracle: MilvusOracle) -> None:
    only = _bm25_only(searched.question, rqs_oracle)
    for hit in searched.reply.hits:
        if key_of(hit) in only and hit.score is not None:
            assert all(abs(hit.score - p) > FLOAT32_TOLERANCE for p in _MAX_L2_PLACEHOLDERS), (
                "the spec forbids max-L2 weak placeholders for BM25-only hits: "
                f"{show_key(key_of(hit))} got score {hit.score!r} (maxL2Distance for unit vectors)"
            )


@then(parsers.parse('no hit carries the primary score label "{label}"'))
def _(searched: Searched, label: str) -> None:
    carrying = [show_key(key_of(h)) for h in searched.reply.hits if h.score_label == label]
    assert not carrying, (
        f"the spec forbids emitting {label!r} as the primary score label; hits {carrying} carry it"
    )


def _bm25_only(query: ScenarioQuery, oracle: MilvusOracle) -> set[ChunkKey]:
    dense = {r.key for r in oracle.dense_search(query.vector, query.k)}
    only = {r.key for r in oracle.rrf(query.vector, query.text, query.k)} - dense
    if not only:
        raise ConformanceError(f"kit bug: the corpus question {query.name!r} has no BM25-only hybrid hit")
    return only

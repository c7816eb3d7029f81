"""Steps of the engine behaviours users trip on (``features/engine/questions_users_ask.feature``).

Each scenario asks Milvus, through the kit's own raw client, a question teams have asked in public, checks
what the engine documents, and records what this engine did as an *engine fact*: a note
``engine fact: <name>: <what it did>`` on the scenario, kept in ``report.json``, from which
``docs/engine_behaviour_table.py`` builds the behaviour-by-version page. Nothing here asks an
implementation.
"""

from __future__ import annotations

import itertools
import math
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import pytest
from pytest_bdd import given, parsers, then, when

from ...reporting import NOT_APPLICABLE_PREFIX
from ...reporting._outcomes import NOTES
from ._engine_kit import DENSE, SPARSE, Answer, EngineKit, Hit, answer, parse_vector
from .engine_then import FLOAT32_REL

__all__ = ["FACT_PREFIX", "NORMALIZATIONS", "normalizations_that_fit"]

FACT_PREFIX = "engine fact: "
_VECTOR = {"vector": parse_vector}
_TWENTY = 20


def _fact(request: pytest.FixtureRequest, name: str, value: str) -> None:
    """Record what the engine did, as a note of the running scenario (never a verdict)."""
    request.node.stash.setdefault(NOTES, []).append(f"{FACT_PREFIX}{name}: {value}")


def _expect(ok: object, message: str) -> None:
    if not ok:
        raise AssertionError(message)


def _close(a: float, b: float, rel: float = FLOAT32_REL) -> bool:
    return math.isclose(a, b, rel_tol=rel, abs_tol=rel)


def _show(hits: Sequence[Hit]) -> str:
    return "[" + ", ".join(f"{h.pk}: {h.score:.9g}" for h in hits) + "]"


def _leading_number(text: str) -> float:
    match = re.match(r"\s*(-?[\d.]+(?:e-?\d+)?)", text)
    if match is None:
        raise ValueError(f"kit bug: {text!r} does not start with a number")
    return float(match.group(1))


# -- what a metric's distance means -----------------------------------------------------------------


@dataclass(frozen=True)
class MetricAnswer:
    metric: str
    answer: Answer


@given(parsers.parse("a collection of pks {first:d} to {last:d} above, indexed with metric {metric}"))
def _(
    first: int,
    last: int,
    metric: str,
    engine_documents: str,
    rqs_engine_kit: EngineKit,
    request: pytest.FixtureRequest,
) -> None:
    rows = [r for r in rqs_engine_kit.rows[engine_documents] if first <= r["pk"] <= last]
    try:
        rqs_engine_kit.metric_collection(rows, metric)
    except Exception as exc:
        if "not supported" not in str(exc) and "not found" not in str(exc):
            raise
        # Milvus 2.2 has no COSINE: a fact of that engine, not an error of the check.
        _fact(request, f"metric {metric}, exact match", "metric not supported")
        pytest.skip(f"{NOT_APPLICABLE_PREFIX}engine {rqs_engine_kit.version} has no metric {metric} ({exc})")


@when(
    parsers.parse("the engine searches it for pk {pk:d}'s vector {vector} with metric {metric}"),
    converters=_VECTOR,
    target_fixture="metric_answer",
)
def _(
    pk: int, vector: list[float], metric: str, engine_documents: str, rqs_engine_kit: EngineKit
) -> MetricAnswer:
    rows = [r for r in rqs_engine_kit.rows[engine_documents] if 2 <= r["pk"] <= 5]
    name = rqs_engine_kit.metric_collection(rows, metric)
    run = lambda e: rqs_engine_kit.dense(name, vector, expr=e, metric=metric)  # noqa: E731
    return MetricAnswer(metric, answer(run, None))


@then(parsers.parse("pk {pk:d}, the exact match, comes first with distance {exact}"))
def _(pk: int, exact: str, metric_answer: MetricAnswer, request: pytest.FixtureRequest) -> None:
    hits = metric_answer.answer.hits_or_raise()
    _expect(hits, f"metric {metric_answer.metric}: the search returned no hits")
    _fact(
        request, f"metric {metric_answer.metric}, exact match", f"{hits[0].score:.6g} (pk {hits[0].pk} first)"
    )
    _expect(hits[0].pk == pk, f"metric {metric_answer.metric}: pk {pk} is not first: {_show(hits)}")
    value = _leading_number(exact)
    _expect(
        _close(hits[0].score, value),
        f"metric {metric_answer.metric}: exact match at {hits[0].score!r}, not {value}",
    )


@then(parsers.parse("the distances {direction} from one hit to the next"))
def _(direction: str, metric_answer: MetricAnswer, request: pytest.FixtureRequest) -> None:
    hits = metric_answer.answer.hits_or_raise()
    scores = [h.score for h in hits]
    seen = (
        "ascend"
        if scores == sorted(scores)
        else "descend"
        if scores == sorted(scores, reverse=True)
        else "unordered"
    )
    _fact(
        request,
        f"metric {metric_answer.metric}, order",
        f"distances {seen} (higher is {'worse' if seen == 'ascend' else 'better'})",
    )
    wanted = {"do not decrease": sorted(scores), "do not increase": sorted(scores, reverse=True)}[direction]
    _expect(scores == wanted, f"metric {metric_answer.metric}: distances {direction}? {_show(hits)}")


@then(parsers.parse("every distance lies within {interval}"))
def _(interval: str, metric_answer: MetricAnswer) -> None:
    low, high = (float(part.strip(" [()]")) for part in interval.split(","))
    hits = metric_answer.answer.hits_or_raise()
    outside = [h for h in hits if not low - FLOAT32_REL <= h.score <= high + FLOAT32_REL]
    _expect(not outside, f"metric {metric_answer.metric}: distances outside {interval}: {_show(outside)}")


# -- the same request twice --------------------------------------------------------------------------


@when(
    parsers.parse('the engine runs a hybrid search of {vector} and "{text}" with RRF k = {k:d} twenty times'),
    converters=_VECTOR,
    target_fixture="repeated_answers",
)
def _(
    vector: list[float], text: str, k: int, engine_documents: str, rqs_engine_kit: EngineKit
) -> list[tuple[Hit, ...]]:
    requests = [(DENSE, vector, "L2"), (SPARSE, text, "BM25")]
    return [rqs_engine_kit.hybrid(engine_documents, requests, k) for _ in range(_TWENTY)]


@then("every answer has the same pks in the same order with the same scores as the first")
def _(repeated_answers: list[tuple[Hit, ...]], request: pytest.FixtureRequest) -> None:
    first = [(h.pk, h.score) for h in repeated_answers[0]]
    differ = [
        i for i, hits in enumerate(repeated_answers, start=1) if [(h.pk, h.score) for h in hits] != first
    ]
    _fact(
        request, "the same hybrid request twenty times", f"identical in {_TWENTY - len(differ)} of {_TWENTY}"
    )
    shown = "; ".join(f"answer {i}: {_show(repeated_answers[i - 1])}" for i in differ[:3])
    _expect(not differ, f"first answer {_show(repeated_answers[0])}; answers that differ: {shown}")


# -- several queries in one call ---------------------------------------------------------------------


@given("the engine supports dense search")
def _() -> None:
    """Every engine the kit starts serves dense search: nothing to probe."""


@dataclass(frozen=True)
class ManyAnswers:
    call: str
    together: tuple[tuple[Hit, ...], ...]
    alone: tuple[tuple[Hit, ...], ...]


@when(
    parsers.parse('the engine runs one {call} for the queries {v1} with "{t1}" and {v2} with "{t2}"'),
    target_fixture="many_answers",
)
def _(
    call: str, v1: str, t1: str, v2: str, t2: str, engine_documents: str, rqs_engine_kit: EngineKit
) -> ManyAnswers:
    vectors, texts = [parse_vector(v1), parse_vector(v2)], [t1, t2]
    kit, name = rqs_engine_kit, engine_documents
    if call == "dense search":
        together = kit.dense_many(name, vectors)
        alone = tuple(kit.dense(name, v) for v in vectors)
    elif call == "hybrid search":
        together = kit.hybrid_many(name, [(DENSE, vectors, "L2"), (SPARSE, texts, "BM25")], 60)
        alone = tuple(
            kit.hybrid(name, [(DENSE, v, "L2"), (SPARSE, t, "BM25")], 60)
            for v, t in zip(vectors, texts, strict=True)
        )
    else:
        raise ValueError(f"kit bug: no call {call!r}")
    return ManyAnswers(call, together, alone)


@then("each query's hits are those of the same query asked alone, in the same order")
def _(many_answers: ManyAnswers, request: pytest.FixtureRequest) -> None:
    same = [
        [h.pk for h in t] == [h.pk for h in a]
        for t, a in zip(many_answers.together, many_answers.alone, strict=True)
    ]
    _fact(
        request,
        f"two queries in one {many_answers.call}",
        f"{sum(same)} of {len(same)} queries answered as alone",
    )
    for i, (together, alone) in enumerate(
        zip(many_answers.together, many_answers.alone, strict=True), start=1
    ):
        _expect(
            [h.pk for h in together] == [h.pk for h in alone],
            f"query {i}: together {_show(together)}, alone {_show(alone)}",
        )


@then("every hit carries the category of its own row")
def _(
    many_answers: ManyAnswers,
    engine_documents: str,
    rqs_engine_kit: EngineKit,
    request: pytest.FixtureRequest,
) -> None:
    stored = {r["pk"]: r["category"] for r in rqs_engine_kit.rows[engine_documents]}
    wrong = [
        (i, h.pk, h.fields.get("category"))
        for i, hits in enumerate(many_answers.together, start=1)
        for h in hits
        if h.fields.get("category") != stored[h.pk]
    ]
    _fact(
        request,
        f"fields with two queries in one {many_answers.call}",
        "each hit its own row's" if not wrong else f"{len(wrong)} hits another row's",
    )
    _expect(not wrong, "hits carrying another row's category (query, pk, category): " + repr(wrong[:5]))


# -- offset ------------------------------------------------------------------------------------------


@when(
    parsers.parse(
        "the engine runs the {search} once with limit {limit:d} "
        "and once with offset {offset:d} and limit {rest:d}"
    ),
    target_fixture="offset_answers",
)
def _(
    search: str, limit: int, offset: int, rest: int, engine_documents: str, rqs_engine_kit: EngineKit
) -> tuple[str, int, tuple[Hit, ...], tuple[Hit, ...]]:
    kit, name = rqs_engine_kit, engine_documents
    runs: dict[str, Callable[..., tuple[Hit, ...]]] = {
        "dense search": lambda **page: kit.dense(name, [0.0, 0.0, 0.0, 0.0], **page),
        # Three documents hold one of these terms: an offset of 1 or 2 still leaves hits to compare.
        "BM25 search": lambda **page: kit.bm25(name, "refund warranty invoice", **page),
        "hybrid search": lambda **page: kit.hybrid(
            name, [(DENSE, [0.0] * 4, "L2"), (SPARSE, "refund invoice", "BM25")], 60, **page
        ),
    }
    full = runs[search](limit=limit)
    return search, offset, full, runs[search](limit=rest, offset=offset)


@then("the hits with the offset are the hits of the first answer from its third on")
def _(
    offset_answers: tuple[str, int, tuple[Hit, ...], tuple[Hit, ...]], request: pytest.FixtureRequest
) -> None:
    search, offset, full, skipped = offset_answers
    _expect(
        len(full) > offset, f"kit bug: the {search} has {len(full)} hits, no more than the offset {offset}"
    )
    expected = [h.pk for h in full[offset:]][: len(skipped) or None]
    honoured = [h.pk for h in skipped] == expected
    _fact(
        request,
        f"offset in a {search}",
        "skips the first hits" if honoured else f"ignored or wrong: {[h.pk for h in skipped]}",
    )
    _expect(honoured, f"{search} with offset {offset}: {_show(skipped)}; without it: {_show(full)}")


# -- a hybrid call with one sub-request ------------------------------------------------------------


@when(
    parsers.parse(
        "the engine runs a hybrid search with the one dense sub-request {vector} and RRF k = {k:d}"
    ),
    converters=_VECTOR,
    target_fixture="engine_answer",
)
def _(vector: list[float], k: int, engine_documents: str, rqs_engine_kit: EngineKit) -> Answer:
    requests = [(DENSE, vector, "L2")]
    return answer(lambda e: rqs_engine_kit.hybrid(engine_documents, requests, k, expr=e), None, k, requests)


@then("every fused score is 1/(k + rank) of that search run alone")
def _(
    engine_answer: Answer, engine_documents: str, rqs_engine_kit: EngineKit, request: pytest.FixtureRequest
) -> None:
    hits, k = engine_answer.hits_or_raise(), engine_answer.k
    assert k is not None, "kit bug: the hybrid step did not record k"
    ((field_name, query, metric),) = engine_answer.requests
    alone = rqs_engine_kit.alone(engine_documents, field_name, query, metric)
    expected = {h.pk: 1.0 / (k + rank) for rank, h in enumerate(alone, start=1)}
    wrong = {h.pk: h.score for h in hits if not _close(h.score, expected.get(h.pk, math.nan))}
    _fact(
        request,
        "hybrid with one sub-request",
        "scores 1/(k + rank)" if not wrong else f"other scores {_show(hits)}",
    )
    _expect(not wrong, f"k={k}: fused {_show(hits)}, expected 1/(k + rank) {expected}")


# -- WeightedRanker and norm_score -------------------------------------------------------------------

# What the engine may have made of a sub-search's score before weighting it: Milvus documents the arctan
# normalizations (L2: 1 - 2 atan(d)/pi; IP, BM25: 2 atan(s)/pi or 0.5 + atan(s)/pi); Lite 3.x negates BM25.
NORMALIZATIONS: dict[str, Callable[[float], float]] = {
    "raw": lambda s: s,
    "raw, sign dropped": abs,
    "1 - 2 atan(s)/pi": lambda s: 1 - 2 * math.atan(s) / math.pi,
    "2 atan(|s|)/pi": lambda s: 2 * math.atan(abs(s)) / math.pi,
    "0.5 + atan(s)/pi": lambda s: 0.5 + math.atan(s) / math.pi,
}


@dataclass(frozen=True)
class WeightedAnswer:
    norm_score: str
    weights: tuple[float, float]
    answer: Answer


@when(
    parsers.parse(
        'the engine runs a hybrid search of {vector} and "{text}" '
        "with a WeightedRanker of {w1:g} and {w2:g}, "
        "norm_score {norm_score}"
    ),
    converters=_VECTOR,
    target_fixture="weighted_answer",
)
def _(
    vector: list[float],
    text: str,
    w1: float,
    w2: float,
    norm_score: str,
    engine_documents: str,
    rqs_engine_kit: EngineKit,
) -> WeightedAnswer:
    from pymilvus import WeightedRanker

    options = {} if norm_score == "default" else {"norm_score": norm_score == "true"}
    try:
        ranker = WeightedRanker(w1, w2, **options)
    except TypeError as exc:  # a pymilvus before 2.5.x
        pytest.skip(f"{NOT_APPLICABLE_PREFIX}this pymilvus has no WeightedRanker norm_score ({exc})")
    requests = [(DENSE, vector, "L2"), (SPARSE, text, "BM25")]
    got = answer(
        lambda e: rqs_engine_kit.hybrid(engine_documents, requests, ranker, expr=e), None, None, requests
    )
    if got.error is not None and options:
        pytest.skip(
            f"{NOT_APPLICABLE_PREFIX}engine {rqs_engine_kit.version} refuses "
            f"norm_score={options['norm_score']}: {got.error}"
        )
    return WeightedAnswer(norm_score, (w1, w2), got)


def normalizations_that_fit(
    hits: Sequence[Hit], subs: Sequence[dict[Any, float]], weights: Sequence[float]
) -> list[tuple[str, ...]]:
    """Every choice of one normalization per sub-search under which each hit's fused score is the weighted
    sum of its normalized sub-scores (a hit a sub-search did not return adds nothing from it)."""
    fits = []
    for names in itertools.product(NORMALIZATIONS, repeat=len(subs)):

        def fused(pk: Any, names: tuple[str, ...] = names) -> float:
            parts = zip(weights, names, subs, strict=True)
            return sum(w * NORMALIZATIONS[n](s[pk]) for w, n, s in parts if pk in s)

        if all(_close(h.score, fused(h.pk), 1e-4) for h in hits):
            fits.append(names)
    return fits


@then("the hits come back by descending fused score")
def _(weighted_answer: WeightedAnswer) -> None:
    hits = weighted_answer.answer.hits_or_raise()
    scores = [h.score for h in hits]
    _expect(scores == sorted(scores, reverse=True), f"weighted scores not descending: {_show(hits)}")


@then(
    parsers.parse(
        "every fused score is {w1:g} times the dense score plus {w2:g} times the BM25 score, "
        "each as one of the engine's normalizations"
    )
)
def _(
    w1: float,
    w2: float,
    weighted_answer: WeightedAnswer,
    engine_documents: str,
    rqs_engine_kit: EngineKit,
    request: pytest.FixtureRequest,
) -> None:
    hits = weighted_answer.answer.hits_or_raise()
    subs = [
        {h.pk: h.score for h in rqs_engine_kit.alone(engine_documents, field_name, query, metric)}
        for field_name, query, metric in weighted_answer.answer.requests
    ]
    found = normalizations_that_fit(hits, subs, (w1, w2))
    what = (
        f"dense as {found[0][0]}, BM25 as {found[0][1]}"
        if found
        else f"none of the known normalizations: {_show(hits)}"
    )
    _fact(request, f"WeightedRanker, norm_score {weighted_answer.norm_score}", what)
    _expect(
        found,
        f"fused {_show(hits)}; dense alone {subs[0]}; BM25 alone {subs[1]}: "
        f"no normalization of {sorted(NORMALIZATIONS)} fits",
    )

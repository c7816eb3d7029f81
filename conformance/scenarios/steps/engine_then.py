"""Then steps of the engine-behaviour scenarios: what the engine answered, checked from first principles.

Expected values come from the scenario tables or from the engine's own single searches (the ranks
that RRF fuses), never from an implementation.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from pytest_bdd import parsers, then

from ._engine_kit import DENSE, Answer, EngineKit, Hit, parse_vector, table_rows

# Scores come back as float32: compare with a relative tolerance a float32 rounding cannot exceed.
FLOAT32_REL = 1e-5
_VECTOR = {"vector": parse_vector}


def _expect(ok: object, message: str) -> None:
    # A plain AssertionError keeps the report's message to what the engine did; a rewritten `assert`
    # would append pytest's introspection of the kit's own objects.
    if not ok:
        raise AssertionError(message)


def _close(a: float, b: float) -> bool:
    return math.isclose(a, b, rel_tol=FLOAT32_REL, abs_tol=FLOAT32_REL)


def _show(hits: tuple[Hit, ...]) -> str:
    return "[" + ", ".join(f"{h.pk}: {h.score:.9g}" for h in hits) + "]"


@then("the distances are, to float32 precision:")
def _(datatable: list[list[str]], engine_answer: Answer) -> None:
    hits = engine_answer.hits_or_raise()
    expected = {r["pk"]: float(r["distance"]) for r in table_rows(datatable)}
    got = {h.pk: h.score for h in hits}
    _expect(set(got) == set(expected), f"engine returned pks {sorted(got)}, expected {sorted(expected)}")
    wrong = {pk: got[pk] for pk, d in expected.items() if not _close(got[pk], d)}
    _expect(not wrong, f"L2 distances {_show(hits)}, expected squared Euclidean {expected}; wrong: {wrong}")


@then(parsers.parse("the hits are in this order: {pks}"))
def _(pks: str, engine_answer: Answer) -> None:
    hits = engine_answer.hits_or_raise()
    expected = [int(p) for p in pks.split(",")]
    _expect([h.pk for h in hits] == expected, f"engine order {_show(hits)}, expected pks {expected}")


@then(parsers.parse("the scores do not {direction} from one hit to the next"))
def _(direction: str, engine_answer: Answer) -> None:
    hits = engine_answer.hits_or_raise()
    scores = [h.score for h in hits]
    ok = scores == sorted(scores, reverse=direction == "increase")
    _expect(ok, f"scores {direction} along the result: {_show(hits)}")


@then("every fused score is the sum of 1/(k + rank) over the dense and the BM25 search run alone")
def _(engine_answer: Answer, engine_documents: str, rqs_engine_kit: EngineKit) -> None:
    hits, k = engine_answer.hits_or_raise(), engine_answer.k
    assert k is not None
    expected: dict[Any, float] = {}
    for field_name, query, metric in engine_answer.requests:
        alone = rqs_engine_kit.alone(engine_documents, field_name, query, metric)
        for rank, hit in enumerate(alone, start=1):
            expected[hit.pk] = expected.get(hit.pk, 0.0) + 1.0 / (k + rank)
    got = {h.pk: h.score for h in hits}
    _expect(set(got) == set(expected), f"fused pks {sorted(got)}, sub-search pks {sorted(expected)}")
    wrong = {pk: (got[pk], expected[pk]) for pk in got if not _close(got[pk], expected[pk])}
    _expect(not wrong, f"k={k}: fused {_show(hits)}; (engine, sum of 1/(k + rank)) differ for {wrong}")


@then("the engine rejects the request")
def _(engine_answer: Answer) -> None:
    hits = engine_answer.hits or ()
    accepted = f"engine accepted RRF k = {engine_answer.k} and answered {_show(hits)}"
    _expect(engine_answer.error is not None, accepted)


@then(
    parsers.parse(
        "the first hit is {pk:d}, ranked first by both searches, and its distance is 2/(k + 1) = {value:g}"
    )
)
def _(pk: int, value: float, engine_answer: Answer) -> None:
    hits, k = engine_answer.hits_or_raise(), engine_answer.k
    assert k is not None, "kit bug: the hybrid step did not record k"
    assert _close(2 / (k + 1), value), "kit bug: the value in the step is not 2/(k + 1)"
    _expect(hits, "the hybrid search returned no hits")
    _expect(hits[0].pk == pk, f"first hit is not {pk}: {_show(hits)}")
    _expect(_close(hits[0].score, value), f"distance of {pk} is {hits[0].score!r}, not 2/(k + 1) = {value}")


@then("every distance is positive and at most 2/(k + 1)")
def _(engine_answer: Answer) -> None:
    hits, k = engine_answer.hits_or_raise(), engine_answer.k
    assert k is not None
    bad = [h for h in hits if not 0 < h.score <= 2 / (k + 1) * (1 + FLOAT32_REL)]
    _expect(not bad, f"distances outside (0, 2/(k + 1)] at k={k}: {_show(tuple(bad))}")


@then("every hit carries its category and its vector as stored")
def _(engine_answer: Answer, engine_documents: str, rqs_engine_kit: EngineKit) -> None:
    stored = {r["pk"]: r for r in rqs_engine_kit.rows[engine_documents]}
    for hit in engine_answer.hits_or_raise():
        row = stored[hit.pk]
        _expect(hit.fields.get("category") == row["category"], f"pk {hit.pk}: fields {hit.fields}")
        vector = hit.fields.get(DENSE)
        _expect(vector is not None, f"pk {hit.pk}: no {DENSE!r} in the returned fields {sorted(hit.fields)}")
        same = np.array_equal(np.asarray(vector, np.float32), np.asarray(row["vector"], np.float32))
        _expect(same, f"pk {hit.pk}: returned vector {vector}, stored {row['vector']}")


@then("squared L2 computed in float32 from each returned vector equals the dense search's distance")
def _(engine_answer: Answer, engine_documents: str, rqs_engine_kit: EngineKit) -> None:
    query = next(q for f, q, _ in engine_answer.requests if f == DENSE)
    dense = {h.pk: h.score for h in rqs_engine_kit.dense(engine_documents, query, fields=())}
    q = np.asarray(query, np.float32)
    for hit in engine_answer.hits_or_raise():
        local = float(np.sum((np.asarray(hit.fields[DENSE], np.float32) - q) ** 2))
        _expect(_close(local, dense[hit.pk]), f"pk {hit.pk}: client {local!r}, engine {dense[hit.pk]!r}")


@then("every score is at least 0")
def _(engine_answer: Answer) -> None:
    hits = engine_answer.hits_or_raise()
    _expect(hits, "the engine returned no hits, so the sign of its scores cannot be checked")
    negative = [h for h in hits if h.score < 0]
    _expect(not negative, f"BM25 scores are negative (the engine negates them?): {_show(hits)}")


@then("the engine returns no hits")
def _(engine_answer: Answer) -> None:
    hits = engine_answer.hits_or_raise()
    _expect(not hits, f"expected no hits, the engine returned {_show(hits)}")


@then(parsers.parse('every hit has category "{category}"'))
def _(category: str, engine_answer: Answer) -> None:
    hits = engine_answer.hits_or_raise()
    _expect(hits, "the filtered search returned no hits, nothing was checked")
    other = {h.pk: h.fields.get("category") for h in hits if h.fields.get("category") != category}
    _expect(not other, f"hits outside category {category!r}: {other}")


@then(parsers.parse('the hits are exactly the "{category}" hits of the same search without the filter'))
def _(category: str, engine_answer: Answer) -> None:
    filtered = engine_answer.hits_or_raise()
    unfiltered = engine_answer.rerun(None)
    kept = {h.pk for h in unfiltered if h.fields.get("category") == category}
    got = {h.pk for h in filtered}
    _expect(got <= {h.pk for h in unfiltered}, f"filtered {sorted(got)} is not within {_show(unfiltered)}")
    _expect(got == kept, f"filtered pks {sorted(got)}, unfiltered {category!r} pks {sorted(kept)}")


@then(parsers.parse("hits {a:d} and {b:d} have equal scores, and so do hits {c:d} and {d:d}"))
def _(a: int, b: int, c: int, d: int, engine_answer: Answer) -> None:
    hits = engine_answer.hits_or_raise()
    score = {h.pk: h.score for h in hits}
    _expect(score[a] == score[b], f"{a} and {b} are not tied as the scenario needs: {_show(hits)}")
    _expect(score[c] == score[d], f"{c} and {d} are not tied as the scenario needs: {_show(hits)}")


@then(parsers.parse("a query for every row returns {count:d} rows"))
def _(count: int, engine_documents: str, rqs_engine_kit: EngineKit) -> None:
    rows = rqs_engine_kit.client.query(engine_documents, filter="pk >= 0", output_fields=["pk"])
    pks = sorted(r["pk"] for r in rows)
    _expect(len(pks) == count, f"expected {count} rows after the upsert, the engine holds pks {pks}")


@then(parsers.parse('pk {pk:d} has category "{category}" and vector {vector}'), converters=_VECTOR)
def _(pk: int, category: str, vector: list[float], engine_documents: str, rqs_engine_kit: EngineKit) -> None:
    rows = rqs_engine_kit.client.get(engine_documents, ids=[pk], output_fields=["category", DENSE])
    _expect(len(rows) == 1, f"get({pk}) returned {len(rows)} rows: {rows}")
    got = rows[0]
    _expect(got["category"] == category, f"pk {pk} kept category {got['category']!r} after the upsert")
    _expect([float(x) for x in got[DENSE]] == vector, f"pk {pk} has vector {got[DENSE]} after the upsert")


@then(parsers.parse("a dense search for {vector} returns pk {pk:d} once, at distance 0"), converters=_VECTOR)
def _(vector: list[float], pk: int, engine_documents: str, rqs_engine_kit: EngineKit) -> None:
    hits = rqs_engine_kit.dense(engine_documents, vector)
    _expect([h.pk for h in hits].count(pk) == 1, f"pk {pk} is not exactly once in {_show(hits)}")
    _expect(hits[0].pk == pk, f"pk {pk} is not first: {_show(hits)}")
    _expect(_close(hits[0].score, 0.0), f"pk {pk} is at {hits[0].score!r}, not 0: {_show(hits)}")

"""Given and When steps of the engine-behaviour scenarios (``features/engine``).

They test Milvus itself through raw pymilvus and never touch an implementation; the Then steps are in
:mod:`.engine_then`. Requests an engine cannot serve (no hybrid search, no BM25) make the scenario NOT
APPLICABLE with the probe's reason; any other engine error is ERRORED.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from pytest_bdd import given, parsers, when

from ...reporting import NOT_APPLICABLE_PREFIX
from ._engine_kit import DENSE, SPARSE, Answer, EngineKit, answer, parse_vector, table_rows

_VECTOR = {"vector": parse_vector}


# -- fixtures ------------------------------------------------------------------------------------


@pytest.fixture(scope="session")
def rqs_engine_kit(rqs_engine: Any) -> Iterator[EngineKit]:
    """The engine-behaviour state of the session; its collections are dropped at the end."""
    kit = EngineKit(rqs_engine)
    try:
        yield kit
    finally:
        kit.drop_all()


@pytest.fixture
def engine_scratch(rqs_engine_kit: EngineKit) -> Iterator[list[str]]:
    """Names of collections one scenario creates for itself (it mutates them); dropped after it."""
    names: list[str] = []
    yield names
    for name in names:
        rqs_engine_kit.drop(name)


# -- given ---------------------------------------------------------------------------------------


@given("the engine holds these documents:", target_fixture="engine_documents")
def _(datatable: list[list[str]], rqs_engine_kit: EngineKit) -> str:
    return rqs_engine_kit.documents_collection(table_rows(datatable))


@given("the engine supports hybrid search and BM25")
def _(rqs_engine_kit: EngineKit) -> None:
    _require(rqs_engine_kit, "hybrid", "bm25")


@given("the engine supports hybrid search")
def _(rqs_engine_kit: EngineKit) -> None:
    _require(rqs_engine_kit, "hybrid")


@given("the engine supports BM25")
def _(rqs_engine_kit: EngineKit) -> None:
    _require(rqs_engine_kit, "bm25")


def _require(kit: EngineKit, *features: str) -> None:
    reasons = [reason for feature in features if (reason := kit.lacks(feature)) is not None]
    if reasons:
        pytest.skip(NOT_APPLICABLE_PREFIX + "; ".join(reasons))


@given(
    "a collection with two vector fields, rows inserted in descending primary key order:",
    target_fixture="engine_documents",
)
def _(datatable: list[list[str]], rqs_engine_kit: EngineKit, engine_scratch: list[str]) -> str:
    rows = [(r["pk"], r["first"], r["second"]) for r in table_rows(datatable)]
    pks = [pk for pk, _, _ in rows]
    assert pks == sorted(pks, reverse=True), "kit bug: the table must list descending primary keys"
    engine_scratch.append(rqs_engine_kit.two_vector_collection("engine_ties", rows))
    return engine_scratch[-1]


@given("a dense collection holding these rows:", target_fixture="engine_documents")
def _(datatable: list[list[str]], rqs_engine_kit: EngineKit, engine_scratch: list[str]) -> str:
    rows = [{**r, "text": ""} for r in table_rows(datatable)]
    engine_scratch.append(rqs_engine_kit.create_documents("engine_upsert", rows))
    return engine_scratch[-1]


# -- when ----------------------------------------------------------------------------------------


@when(
    parsers.parse("the engine searches the vector field for {vector} with metric L2"),
    converters=_VECTOR,
    target_fixture="engine_answer",
)
def _(vector: list[float], engine_documents: str, rqs_engine_kit: EngineKit) -> Answer:
    return answer(lambda expr: rqs_engine_kit.dense(engine_documents, vector, expr=expr), None)


@when(
    parsers.parse("the engine searches the vector field for {vector} with metric L2, filtered by {expr}"),
    converters=_VECTOR,
    target_fixture="engine_answer",
)
def _(vector: list[float], expr: str, engine_documents: str, rqs_engine_kit: EngineKit) -> Answer:
    return answer(lambda e: rqs_engine_kit.dense(engine_documents, vector, expr=e), expr)


def _hybrid(
    kit: EngineKit,
    name: str,
    vector: list[float],
    text: str,
    k: int,
    *,
    expr: str | None = None,
    fields: tuple[str, ...] = ("category",),
) -> Answer:
    requests = [(DENSE, vector, "L2"), (SPARSE, text, "BM25")]
    return answer(lambda e: kit.hybrid(name, requests, k, expr=e, fields=fields), expr, k, requests)


@when(
    parsers.parse('the engine runs a hybrid search of {vector} and "{text}" with RRF k = {k:d}'),
    converters=_VECTOR,
    target_fixture="engine_answer",
)
def _(vector: list[float], text: str, k: int, engine_documents: str, rqs_engine_kit: EngineKit) -> Answer:
    return _hybrid(rqs_engine_kit, engine_documents, vector, text, k)


@when(
    parsers.parse(
        'the engine runs a hybrid search of {vector} and "{text}" with RRF k = {k:d}, asking for {fields}'
    ),
    converters=_VECTOR,
    target_fixture="engine_answer",
)
def _(
    vector: list[float], text: str, k: int, fields: str, engine_documents: str, rqs_engine_kit: EngineKit
) -> Answer:
    names = tuple(f.strip() for f in fields.split(","))
    return _hybrid(rqs_engine_kit, engine_documents, vector, text, k, fields=names)


@when(
    parsers.parse(
        'the engine runs a hybrid search of {vector} and "{text}" with RRF k = {k:d}, '
        "filtered by {expr} on every sub-request"
    ),
    converters=_VECTOR,
    target_fixture="engine_answer",
)
def _(
    vector: list[float], text: str, k: int, expr: str, engine_documents: str, rqs_engine_kit: EngineKit
) -> Answer:
    return _hybrid(rqs_engine_kit, engine_documents, vector, text, k, expr=expr)


@when(
    parsers.parse("the engine runs a hybrid search of {vector} on both vector fields with RRF k = {k:d}"),
    converters=_VECTOR,
    target_fixture="engine_answer",
)
def _(vector: list[float], k: int, engine_documents: str, rqs_engine_kit: EngineKit) -> Answer:
    requests = [("first", vector, "L2"), ("second", vector, "L2")]
    run = lambda e: rqs_engine_kit.hybrid(engine_documents, requests, k, expr=e, fields=())  # noqa: E731
    return answer(run, None, k, requests)


@when(parsers.parse('the engine runs a BM25 search for "{text}"'), target_fixture="engine_answer")
def _(text: str, engine_documents: str, rqs_engine_kit: EngineKit) -> Answer:
    return answer(lambda _e: rqs_engine_kit.bm25(engine_documents, text), None)


@when(
    parsers.parse('the engine upserts pk {pk:d} with category "{category}" and vector {vector}'),
    converters=_VECTOR,
)
def _(pk: int, category: str, vector: list[float], engine_documents: str, rqs_engine_kit: EngineKit) -> None:
    try:
        rqs_engine_kit.client.upsert(
            engine_documents, [{"pk": pk, "category": category, "text": "", DENSE: vector}]
        )
    except Exception as exc:
        if "unknown method Upsert" not in str(exc):
            raise
        # Milvus before 2.3 has no Upsert at all: nothing to check, said with the engine's words.
        pytest.skip(f"{NOT_APPLICABLE_PREFIX}engine {rqs_engine_kit.version} has no Upsert ({exc})")

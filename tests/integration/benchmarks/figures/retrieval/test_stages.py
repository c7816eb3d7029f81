"""The stage timer of the benchmarks times every stage of a lookup and leaves the reference as it was."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from pymilvus import MilvusClient

import reference._lookup
import reference.store._store
from benchmarks.figures.retrieval.stages import STAGES, stage_times
from reference import Chunk, MilvusKnowledgeStore, Settings, lookup_knowledge

DIM = 8


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> Iterator[MilvusKnowledgeStore]:
    client = MilvusClient(str(tmp_path_factory.mktemp("stages") / "milvus.db"))
    store = MilvusKnowledgeStore(client, collection="stages", dim=DIM, settings=Settings())
    store.ensure_collection()
    store.ingest(
        Chunk(doc_id=f"d{j}", chunk_index=0, text=f"refund {j}", vector=_unit(j % DIM)) for j in range(12)
    )
    yield store
    client.close()


def _unit(axis: int) -> tuple[float, ...]:
    return tuple(float(i == axis) for i in range(DIM))


def test_every_stage_is_timed_on_the_engine_and_warm_then_put_back(store: MilvusKnowledgeStore) -> None:
    before = [getattr(module, name) for _, module, name in STAGES]
    answers: list[int] = []

    def lookup(query: int) -> None:
        vector = list(_unit(query))
        answers.append(len(lookup_knowledge(store, "refund policy", vector, mode="hybrid").result.blocks))

    found = stage_times(lookup, store.client, [0, 1, 2], replays=2)
    assert found["queries"] == 3
    for where in ("engine", "warm"):
        us = found["us"][where]
        assert all(us[label] > 0 for label, _, _ in STAGES)
        assert us["the rest (lookup_knowledge, search arguments, requests, result)"] > 0
    # Replayed from memory, the same replies give the same evidence; every lookup ran.
    assert answers[3:6] == answers[:3] == answers[6:]
    assert [getattr(module, name) for _, module, name in STAGES] == before
    assert "hybrid_search" not in vars(store.client)  # the client's own method again
    assert reference._lookup.post_process is before[-1]
    assert reference.store._store.candidates is before[3]


def test_no_queries_times_nothing(store: MilvusKnowledgeStore) -> None:
    assert stage_times(lambda query: None, store.client, []) == {}

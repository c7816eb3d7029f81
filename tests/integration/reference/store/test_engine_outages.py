"""Every engine call has a deadline, and a store outlives its engine's restart.

A frozen Milvus Lite server (SIGSTOP) makes a lookup raise the typed timeout within the deadline; a
server killed and started again on the same data dir and port is answered again by the same store.
One server for the module; every test thaws it (or starts it again) before it ends.
"""

from __future__ import annotations

import time
from collections.abc import Iterator

import pytest

from conformance.engines._load import stretched
from reference import EngineTimeoutError, Settings, StoreError, lookup_knowledge
from reference.store._store import MilvusKnowledgeStore

from ..lite_server import LiteServer
from .knowledge_base import DIM, DOCS, version

DEADLINE = 1.0
QUERY = (1.0, 0.0, 0.0, 0.0)
CHUNKS = [c for doc in DOCS for c in version(doc, 1, 3)]


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LiteServer]:
    lite = LiteServer(tmp_path_factory.mktemp("outage"))
    try:
        lite.start()
        yield lite
    finally:
        lite.close()


@pytest.fixture
def store(server: LiteServer, request: pytest.FixtureRequest) -> Iterator[MilvusKnowledgeStore]:
    settings = Settings(deadline_seconds=DEADLINE)
    with MilvusKnowledgeStore.connect(
        server.uri, collection=f"out_{request.node.name[:40]}", dim=DIM, settings=settings
    ) as s:
        s.drop()
        s.ingest(CHUNKS)
        try:
            yield s
        finally:
            server.thaw()
            s.drop()


def _found(store: MilvusKnowledgeStore) -> int:
    return len(lookup_knowledge(store, "alpha chunk", QUERY).candidates)


def test_a_frozen_engine_makes_a_lookup_time_out_within_the_deadline(
    server: LiteServer, store: MilvusKnowledgeStore
) -> None:
    assert _found(store) > 0
    server.freeze()
    try:
        started = time.monotonic()
        with pytest.raises(EngineTimeoutError) as info:
            lookup_knowledge(store, "alpha chunk", QUERY)
        waited = time.monotonic() - started
        with pytest.raises(EngineTimeoutError):
            store.ingest(version("alpha", 2, 2))
    finally:
        server.thaw()
    assert 0.9 * DEADLINE <= waited < DEADLINE + stretched(2.0), waited  # grpc times the deadline itself
    assert info.value.deadline_seconds == DEADLINE
    assert "hybrid search" in info.value.operation
    assert "milvus.deadline-seconds" in str(info.value)
    assert _found(store) > 0  # thawed: the same store answers again


def test_a_restarted_engine_is_answered_again_by_the_same_store(
    server: LiteServer, store: MilvusKnowledgeStore
) -> None:
    before = lookup_knowledge(store, "alpha chunk", QUERY)
    server.kill()
    try:
        with pytest.raises(StoreError):
            lookup_knowledge(store, "alpha chunk", QUERY)
    finally:
        server.start()
    # The engine lost its loaded state with the restart: the next call loads the collection again.
    after = lookup_knowledge(store, "alpha chunk", QUERY)
    assert after.model_dump() == before.model_dump()
    assert store.count() == len(CHUNKS)

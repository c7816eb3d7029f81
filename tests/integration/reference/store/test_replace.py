"""A document is the unit of change: an ingest replaces it whole, a delete removes it, and a lookup at
every step of a replace answers from one version of each document, never a mix and never neither.

One Milvus Lite file for the module; each test works in a collection of its own, dropped afterwards.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

import pytest
from pymilvus import MilvusClient

from reference import StoreError
from reference.store import _writes
from reference.store._store import MilvusKnowledgeStore

from .knowledge_base import DIM, DOCS, answered, stored, texts, version, whole_versions


@pytest.fixture(scope="module")
def client(tmp_path_factory: pytest.TempPathFactory) -> Iterator[MilvusClient]:
    c = MilvusClient(str(tmp_path_factory.mktemp("replace") / "kb.db"))
    yield c
    c.close()


@pytest.fixture
def store(client: MilvusClient, request: pytest.FixtureRequest) -> Iterator[MilvusKnowledgeStore]:
    name = re.sub(r"\W", "_", request.node.name[:40])
    s = MilvusKnowledgeStore(client, collection=f"rep_{name}", dim=DIM)
    s.drop()
    try:
        yield s
    finally:
        s.drop()


def test_a_document_shrinks_to_two_chunks_and_grows_back_to_five(store: MilvusKnowledgeStore) -> None:
    first = [c for doc in DOCS for c in version(doc, 1, 5)]
    store.ingest(first)
    assert stored(store) == texts(first)

    shrunk = version("alpha", 2, 2)
    assert store.ingest(shrunk) == 2
    others = [c for c in first if c.doc_id != "alpha"]
    assert stored(store) == texts(shrunk + others)
    assert store.count() == 12
    assert whole_versions(store, {("alpha", 2): 2, ("beta", 1): 5, ("gamma", 1): 5}) == {
        "alpha": 2,
        "beta": 1,
        "gamma": 1,
    }

    grown = version("alpha", 3, 5)
    store.ingest(grown)
    assert stored(store) == texts(grown + others)
    assert whole_versions(store, {("alpha", 3): 5, ("beta", 1): 5, ("gamma", 1): 5})["alpha"] == 3


def test_delete_removes_exactly_one_document(store: MilvusKnowledgeStore) -> None:
    first = [c for doc in DOCS for c in version(doc, 1, 3)]
    store.ingest(first)
    assert store.delete_document("beta") == 3
    assert stored(store) == texts([c for c in first if c.doc_id != "beta"])
    assert set(answered(store)) == {"alpha", "gamma"}
    assert store.delete_document("beta") == 0  # gone already: nothing to do, not an error
    assert store.delete_document('al"pha') == 0  # quoted in the filter, matches nothing
    assert store.count() == 6


def test_delete_on_a_missing_collection_creates_nothing(store: MilvusKnowledgeStore) -> None:
    assert store.delete_document("alpha") == 0
    assert not store.client.has_collection(store.collection)


@pytest.mark.parametrize("doc_id", ["", None, 7])
def test_delete_needs_a_docid(store: MilvusKnowledgeStore, doc_id: object) -> None:
    with pytest.raises(StoreError, match="docId"):
        store.delete_document(doc_id)  # type: ignore[arg-type]


def test_every_step_of_a_replace_answers_one_whole_version_per_document(
    store: MilvusKnowledgeStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    store.ingest([c for doc in DOCS for c in version(doc, 1, 5)])
    sizes = {(doc, 1): 5 for doc in DOCS} | {(doc, 2): 2 for doc in DOCS}
    steps: list[tuple[str, dict[str, int]]] = []
    monkeypatch.setattr(_writes, "_COMMIT_GROUP", 1)  # one document per commit: states in between
    monkeypatch.setattr(
        _writes, "_after_step", lambda step: steps.append((step, whole_versions(store, sizes)))
    )
    store.ingest([c for doc in DOCS for c in version(doc, 2, 2)], batch_size=4)

    # Written in two batches, then committed document by document: the old version answers until its
    # document's commit, the new one from then on.
    assert steps == [
        ("written 4", {"alpha": 1, "beta": 1, "gamma": 1}),
        ("written 6", {"alpha": 1, "beta": 1, "gamma": 1}),
        ("committed 1", {"alpha": 2, "beta": 1, "gamma": 1}),
        ("committed 2", {"alpha": 2, "beta": 2, "gamma": 1}),
        ("committed 3", {"alpha": 2, "beta": 2, "gamma": 2}),
    ]
    assert store.count() == 6


def test_a_failed_write_leaves_the_old_version(
    store: MilvusKnowledgeStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    first = [c for doc in DOCS for c in version(doc, 1, 3)]
    store.ingest(first)
    real = store.client.insert
    calls = 0

    def second_batch_fails(*args: object, **kwargs: object) -> object:
        nonlocal calls
        calls += 1
        if calls == 2:
            raise ConnectionError("the engine went away")
        return real(*args, **kwargs)

    monkeypatch.setattr(store.client, "insert", second_batch_fails)
    with pytest.raises(StoreError, match="went away"):
        store.ingest([c for doc in DOCS for c in version(doc, 2, 2)], batch_size=2)
    monkeypatch.undo()
    assert stored(store) == texts(first)  # the first batch's rows were removed again


@pytest.mark.parametrize(
    ("chunk", "named"),
    [
        ({"vector": (1e39, 0.0, 0.0, 0.0)}, "beta'#1: vector component 0 is 1e+39"),
        ({"vector": (0.0, float("nan"), 0.0, 0.0)}, "beta'#1: vector holds NaN"),
        ({"vector": (1.0, 0.0, 0.0)}, "chunk beta#1 has a vector of dimension 3"),
        ({"text": "half a pair: \ud83d"}, "beta'#1: text holds a lone surrogate"),
    ],
)
def test_a_bad_chunk_is_refused_by_its_id_and_nothing_is_written(
    store: MilvusKnowledgeStore, chunk: dict[str, object], named: str
) -> None:
    first = [c for doc in DOCS for c in version(doc, 1, 3)]
    store.ingest(first)
    bad = {
        "docId": "beta",
        "chunkIndex": 1,
        "text": "beta v2 chunk 1",
        "vector": (0.0, 1.0, 0.0, 0.0),
        **chunk,
    }
    replacement = [*version("alpha", 2, 3), bad, *version("gamma", 2, 3)]
    with pytest.raises(StoreError) as info:
        store.ingest(replacement, batch_size=1)
    assert named in str(info.value)
    assert stored(store) == texts(first)

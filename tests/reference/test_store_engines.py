"""The store on every engine this machine runs: what it finds each engine supports, and that its replies
are the same wherever the engines can serve them.

Lite 3.x of this venv is the yardstick (its replies are checked from first principles in
test_store.py); Lite 2.5.1 (the C++ core, no nullable fields) and Milvus 2.3.5 (the Go server, no
BM25) are installed into the kit's engine cache on first use and run as loopback servers.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from reference import EngineFeatureError, Settings, lookup_knowledge
from reference._schema import ABSENT
from reference._store import MilvusKnowledgeStore
from tests.local_engines import local_engine_uri
from tests.reference.test_store import CORPUS, DIM, ODD_CATEGORY, QUERY_TEXT, QUERY_VECTOR, K

# engine -> the features its store lacks
LACKS = {"lite-3": set(), "lite-2.5.1": {"nullable"}, "milvus-2.3.5": {"nullable", "bm25"}}
CATEGORIES = [None, "news", ODD_CATEGORY, "nope", ABSENT]


def _open(engine: str, tmp: Path) -> MilvusKnowledgeStore:
    uri = str(tmp / "lite3.db") if engine == "lite-3" else local_engine_uri(engine)
    return MilvusKnowledgeStore.connect(uri, collection="engines_store", dim=DIM)


def _replies(store: MilvusKnowledgeStore) -> dict[tuple[str, str | None], Any]:
    """Every (mode, category) question's hits, or the typed error an engine without the mode gives."""
    out: dict[tuple[str, str | None], Any] = {}
    for mode in ("dense", "hybrid"):
        for category in CATEGORIES:
            try:
                hits = store.search(QUERY_TEXT, QUERY_VECTOR, mode=mode, k=K, category=category)
                out[mode, category] = hits
            except EngineFeatureError as exc:
                out[mode, category] = exc
    return out


@pytest.fixture(scope="module")
def stores(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, MilvusKnowledgeStore]]:
    opened: dict[str, MilvusKnowledgeStore] = {}
    yield opened
    for store in opened.values():
        store.drop()
        store.close()


@pytest.fixture(scope="module")
def lite3(stores: dict[str, MilvusKnowledgeStore], tmp_path_factory: pytest.TempPathFactory) -> Any:
    store = stores["lite-3"] = _open("lite-3", tmp_path_factory.mktemp("lite3"))
    store.drop()
    store.ingest(CORPUS)
    return _replies(store)


@pytest.fixture(scope="module", params=sorted(LACKS))
def engine(
    request: pytest.FixtureRequest, stores: dict[str, MilvusKnowledgeStore], tmp_path_factory: Any
) -> tuple[str, MilvusKnowledgeStore]:
    name = request.param
    if name not in stores:
        store = _open(name, tmp_path_factory.mktemp(name))
        store.drop()
        store.ingest(CORPUS)
        stores[name] = store
    return name, stores[name]


def _same_hits(got: list[Any], want: list[Any]) -> None:
    exact = ("evidence_key", "original_rank", "score_label", "text", "category", "source_type")
    assert [[getattr(h, f) for f in exact] for h in got] == [[getattr(h, f) for f in exact] for h in want]
    for g, w in zip(got, want, strict=True):
        assert g.score == pytest.approx(w.score, rel=1e-5, abs=1e-6)  # float32 on every engine
        assert (g.dense_distance is None) == (w.dense_distance is None)
        if w.dense_distance is not None:
            assert g.dense_distance == pytest.approx(w.dense_distance, rel=1e-5, abs=1e-6)


def test_the_store_finds_what_each_engine_lacks(engine: tuple[str, MilvusKnowledgeStore]) -> None:
    name, store = engine
    assert store.features is not None
    assert set(store.features.missing) == LACKS[name]
    reopened = MilvusKnowledgeStore(store.client, collection=store.collection, dim=DIM)
    reopened.ensure_collection()  # an existing collection: its schema says the same
    assert reopened.features is not None
    assert set(reopened.features.missing) == LACKS[name]


def test_replies_are_the_same_on_every_engine_that_can_serve_them(
    engine: tuple[str, MilvusKnowledgeStore], lite3: Any
) -> None:
    name, store = engine
    got = _replies(store)
    for (mode, category), want in lite3.items():
        if mode == "hybrid" and "bm25" in LACKS[name]:
            assert isinstance(got[mode, category], EngineFeatureError), (mode, category)
            assert got[mode, category].feature == "bm25"
            continue
        assert not isinstance(got[mode, category], Exception), got[mode, category]
        _same_hits(got[mode, category], want)
    assert any(h.category is None for h in got["dense", None])  # absent metadata came back as None
    assert got["dense", ABSENT] == got["dense", "nope"] == []  # the sentinel is never a category


def test_lookup_gives_the_same_evidence_on_every_engine(
    engine: tuple[str, MilvusKnowledgeStore], stores: dict[str, MilvusKnowledgeStore], lite3: Any
) -> None:
    _, store = engine
    settings = Settings(retrieve_k=K, return_n=3)
    for category in ("news", "nope"):
        got, want = (
            lookup_knowledge(s, QUERY_TEXT, QUERY_VECTOR, settings=settings, category=category, mode="dense")
            for s in (store, stores["lite-3"])
        )
        assert got.path == want.path
        assert [b.evidence_key for b in got.result.blocks] == [b.evidence_key for b in want.result.blocks]
        assert got.result.relevance_level == want.result.relevance_level

"""The store's choice of schema and search path per engine, against fake engines that answer the way
the real ones do (measured: tests/integration/conformance/engines/test_other_engines.py runs the same on
the real engines).

- full: Milvus 2.5+ and Lite 3.x take the whole schema;
- no nullable: Lite 2.5.1 refuses a nullable field at create ("MilvusLite doesn't support nullable");
- Milvus 2.3: takes a nullable field but quietly makes it required, takes a sparse field but drops the
  BM25 Function, then refuses the sparse index; has no HybridSearch at all.
"""

from __future__ import annotations

from typing import Any

import grpc
import pytest
from pymilvus import MilvusClient
from pymilvus.exceptions import MilvusException

from reference import Chunk, EngineFeatureError, IngestError, StoreError
from reference.store._schema import ABSENT, category_filter
from reference.store._store import MilvusKnowledgeStore

DIM = 4
VECTOR = (1.0, 0.0, 0.0, 0.0)
CHUNKS = [
    Chunk(doc_id="a", chunk_index=0, text="alpha", vector=VECTOR, category="news", source_type="faq"),
    Chunk(doc_id="b", chunk_index=0, text="beta", vector=VECTOR),  # no category, no source type
]


class _Unimplemented(grpc.RpcError):
    def code(self) -> grpc.StatusCode:
        return grpc.StatusCode.UNIMPLEMENTED

    def details(self) -> str:
        return "unknown method HybridSearch for service milvus.proto.milvus.MilvusService"


class FakeEngine:
    """Just enough of MilvusClient for the store, answering like one kind of engine."""

    create_schema = MilvusClient.create_schema
    prepare_index_params = MilvusClient.prepare_index_params

    def __init__(self, kind: str, version: str | None = "v-fake") -> None:
        self.kind = kind
        self.version = version
        self.collections: dict[str, dict[str, Any]] = {}
        self.calls: list[str] = []
        self.rows: list[dict[str, Any]] = []

    def get_server_version(self, **_: Any) -> str:
        if self.version is None:  # Lite 2.5.1 has no GetVersion
            raise _Unimplemented()
        return self.version

    def has_collection(self, name: str, **_: Any) -> bool:
        return name in self.collections

    def create_collection(self, name: str, *, schema: Any, **_: Any) -> None:
        self.calls.append("create_collection")
        nullable = any(f.nullable for f in schema.fields)
        if self.kind == "broken":
            raise MilvusException(code=65535, message="the engine is read-only")
        if self.kind == "no-nullable" and nullable:
            raise MilvusException(code=1100, message="MilvusLite doesn't support nullable: invalid parameter")
        keeps = self.kind == "full" or self.kind == "no-nullable"
        fields = []
        for field in schema.fields:
            described: dict[str, Any] = {"name": field.name, "params": dict(field.params)}
            if field.nullable and keeps:
                described["nullable"] = True
            if field.is_function_output and keeps:
                described["is_function_output"] = True
            fields.append(described)
        functions = [dict(f.to_dict()) for f in schema.functions] if keeps else []
        self.collections[name] = {"fields": fields, "functions": functions}

    def describe_collection(self, name: str, **_: Any) -> dict[str, Any]:
        return self.collections[name]

    def create_index(self, name: str, index: Any, **_: Any) -> None:
        self.calls.append("create_index")
        if self.kind == "milvus-2.3" and any(i.field_name == "sparse" for i in index):
            raise MilvusException(code=1100, message="create index on 104 field is not supported")

    def load_collection(self, name: str, **_: Any) -> None:
        self.calls.append("load_collection")

    def drop_collection(self, name: str, **_: Any) -> None:
        self.calls.append("drop_collection")
        self.collections.pop(name, None)

    def insert(self, name: str, rows: list[dict[str, Any]], **_: Any) -> None:
        self.rows.extend(rows)

    def delete(self, name: str, *, filter: str, **_: Any) -> None:
        self.calls.append("delete")  # the commit of an ingest: no older generation is stored here

    def flush(self, name: str, **_: Any) -> None:
        self.calls.append("flush")

    def _hits(self) -> list[list[dict[str, Any]]]:
        return [
            [{"id": r["row_key"], "distance": 0.5, "entity": {**r, "dense": list(VECTOR)}} for r in self.rows]
        ]

    def search(self, *_: Any, **__: Any) -> list[list[dict[str, Any]]]:
        self.calls.append("search")
        return self._hits()

    def hybrid_search(self, *_: Any, **__: Any) -> list[list[dict[str, Any]]]:
        self.calls.append("hybrid_search")
        if self.kind == "milvus-2.3":
            raise _Unimplemented()
        return self._hits()


def _store(engine: FakeEngine) -> MilvusKnowledgeStore:
    store = MilvusKnowledgeStore(engine, collection="chunks", dim=DIM)  # type: ignore[arg-type]
    store.ingest(CHUNKS)
    return store


def test_an_engine_with_everything_gets_the_full_schema_in_one_create() -> None:
    engine = FakeEngine("full", version="v2.5.16")
    store = _store(engine)
    assert store.features is not None
    assert (store.features.nullable, store.features.bm25, store.features.version) == (True, True, "v2.5.16")
    assert engine.calls == ["create_collection", "create_index", "load_collection"]
    assert [r["category"] for r in engine.rows] == ["news", None]  # absent stays null


def test_without_nullable_fields_absent_is_the_sentinel_in_the_store_and_none_in_replies() -> None:
    engine = FakeEngine("no-nullable", version=None)
    store = _store(engine)
    assert store.features is not None
    assert not store.features.nullable
    assert store.features.bm25
    assert "doesn't support nullable" in store.features.missing["nullable"]
    assert store.features.version is None  # no GetVersion: nothing guessed
    assert [(r["category"], r["source_type"]) for r in engine.rows] == [("news", "faq"), (ABSENT, ABSENT)]
    for mode in ("dense", "hybrid"):
        hits = store.search("alpha", VECTOR, mode=mode, k=2)  # type: ignore[arg-type]
        assert [(h.category, h.source_type) for h in hits] == [("news", "faq"), (None, None)]


def test_milvus_2_3_gets_dense_only_and_nothing_half_made_is_left() -> None:
    engine = FakeEngine("milvus-2.3", version="v2.3.5")
    store = _store(engine)
    assert store.features is not None
    assert set(store.features.missing) == {"nullable", "bm25"}
    assert "came in Milvus 2.5; v2.3.5 is older" in store.features.missing["nullable"]
    # Every refused variant was dropped before the next was tried.
    assert engine.calls.count("create_collection") == engine.calls.count("drop_collection") + 1
    assert list(engine.collections) == ["chunks"]
    assert [r["category"] for r in engine.rows] == ["news", ABSENT]
    assert [h.category for h in store.search("", VECTOR, mode="dense", k=2)] == ["news", None]


def test_an_engine_that_keeps_the_flag_but_predates_nullable_fields_is_not_asked_for_them() -> None:
    """Lite 2.4.12 keeps a nullable field in its schema, then its server exits on the first search."""
    engine = FakeEngine("full", version="milvus_lite-2.4.12")
    store = _store(engine)
    assert store.features is not None
    assert not store.features.nullable
    assert "milvus_lite-2.4.12 is older" in store.features.missing["nullable"]
    assert engine.calls[:1] == ["create_collection"]  # one create: the richest variant it may have
    assert not any(f.get("nullable") for f in engine.collections["chunks"]["fields"])
    assert [r["category"] for r in engine.rows] == ["news", ABSENT]


@pytest.mark.parametrize(
    ("version", "seals"),
    [("milvus_lite-3.2.2", True), ("milvus_lite-2.5.1", True), ("v2.5.16", False), (None, False)],
)
def test_each_ingest_seals_its_rows_on_milvus_lite_only(version: str | None, seals: bool) -> None:
    """Lite keeps rows in memory and rebuilds their BM25 index per search; a server seals by itself and
    rate-limits flushes. The seal comes after the writes (and the commit's delete), once per ingest."""
    engine = FakeEngine("full", version=version)
    store = _store(engine)
    store.ingest(CHUNKS)  # into the existing collection: the commit deletes the first generation
    seal = ["flush"] if seals else []
    assert engine.calls[engine.calls.index("load_collection") + 1 :] == [*seal, "delete", *seal]


def test_a_milvus_2_3_that_kept_a_nullable_flag_would_still_be_caught_by_the_kept_schema_check() -> None:
    engine = FakeEngine("milvus-2.3", version=None)  # no version: nothing is assumed, the schema says
    store = _store(engine)
    assert store.features is not None
    assert "did not keep it" in store.features.missing["nullable"]


def test_hybrid_on_an_engine_without_bm25_names_the_feature_before_asking_the_engine() -> None:
    engine = FakeEngine("milvus-2.3", version="v2.3.5")
    store = _store(engine)
    before = list(engine.calls)
    with pytest.raises(EngineFeatureError, match=r"hybrid mode needs BM25.*engine v2\.3\.5") as info:
        store.search("alpha", VECTOR, mode="hybrid", k=2)
    assert (info.value.feature, info.value.engine_version) == ("bm25", "v2.3.5")
    assert isinstance(info.value, StoreError)
    assert engine.calls == before


def test_an_engine_without_hybrid_search_is_a_typed_error_too() -> None:
    engine = FakeEngine("milvus-2.3")
    store = MilvusKnowledgeStore(engine, collection="chunks", dim=DIM)  # type: ignore[arg-type]
    engine.kind = "full"  # it takes the full schema, yet has no HybridSearch RPC
    store.ingest(CHUNKS)
    engine.kind = "milvus-2.3"
    with pytest.raises(EngineFeatureError, match="does not implement hybrid_search") as info:
        store.search("alpha", VECTOR, mode="hybrid", k=2)
    assert info.value.feature == "hybrid_search"


def test_an_engine_refusing_every_variant_says_what_it_said_to_the_full_schema() -> None:
    engine = FakeEngine("broken")
    with pytest.raises(StoreError, match=r"could not create the collection.*read-only") as info:
        _store(engine)
    assert not isinstance(info.value, EngineFeatureError)
    assert engine.collections == {}


def test_an_existing_collection_tells_its_features_by_its_schema() -> None:
    engine = FakeEngine("no-nullable")
    _store(engine)
    engine.calls.clear()
    reopened = MilvusKnowledgeStore(engine, collection="chunks", dim=DIM)  # type: ignore[arg-type]
    assert reopened.features is None  # nothing asked yet
    reopened.ensure_collection()
    assert "create_collection" not in engine.calls
    assert reopened.features is not None
    assert set(reopened.features.missing) == {"nullable"}
    assert "created without nullable fields" in reopened.features.missing["nullable"]


def test_dropping_forgets_the_features_a_new_collection_finds_them_again() -> None:
    engine = FakeEngine("full")
    store = _store(engine)
    store.drop()
    assert store.features is None


@pytest.mark.parametrize("field", ["category", "source_type"])
def test_a_chunk_cannot_carry_the_sentinel(field: str) -> None:
    with pytest.raises(IngestError, match="NUL character"):
        Chunk(doc_id="d", chunk_index=0, text="t", **{field: f"a{ABSENT}b"})


def test_a_category_filter_never_matches_the_sentinel() -> None:
    assert category_filter(ABSENT) == category_filter(f"x{ABSENT}") == 'row_key == ""'
    assert category_filter("news") == 'category == "news"'


def test_an_ingest_into_a_collection_the_store_just_made_deletes_nothing_and_the_next_commits() -> None:
    engine = FakeEngine("full")
    store = MilvusKnowledgeStore(engine, collection="chunks", dim=DIM)  # type: ignore[arg-type]
    store.ensure_collection()
    store.ingest(CHUNKS)
    assert "delete" not in engine.calls  # nothing stored before: no older generation to remove
    store.ingest(CHUNKS)
    assert engine.calls.count("delete") == 1  # one commit for both documents
    reopened = MilvusKnowledgeStore(engine, collection="chunks", dim=DIM)  # type: ignore[arg-type]
    reopened.ingest(CHUNKS)
    assert engine.calls.count("delete") == 2  # a collection it did not make may hold older versions

"""The reference store's collection schema: field names, creation, and checking an existing one.

Schema (created by :meth:`MilvusKnowledgeStore.ensure_collection`):

==============  =====================  ==============================================================
field           type                   notes
==============  =====================  ==============================================================
row_key         VARCHAR, primary key   ``sha256(docId)#chunkIndex@generation``: one row per chunk and
                                       version (no quote in it: Lite 2.5.1 quotes keys unescaped)
doc_id          VARCHAR
chunk_index     INT64
generation      INT64                  the ingest that wrote the row (its start, in ns since the epoch)
text            VARCHAR                ``enable_analyzer``, ``standard`` analyzer, input of BM25
dense           FLOAT_VECTOR(dim)      index FLAT (default) or HNSW, metric L2 (squared Euclidean)
sparse          SPARSE_FLOAT_VECTOR    output of a BM25 ``Function`` on ``text``; SPARSE_INVERTED_INDEX
category        VARCHAR, nullable      absent stays null, never ""
source_type     VARCHAR, nullable
==============  =====================  ==============================================================

Two smaller variants serve engines that lack a feature (see :mod:`reference.store._features`):

- **without nullable fields** (Milvus Lite 2.5.1): ``category`` and ``source_type`` are plain VARCHAR
  and an absent value is stored as :data:`ABSENT`, a single NUL character. No chunk can carry it
  (:class:`~reference.Chunk` refuses NUL in both fields), the store reads it back as ``None``, so it
  never reaches a reply, and :func:`category_filter` never matches it.
- **without BM25** (Milvus 2.3): no ``sparse`` field, no Function, ``text`` without an analyzer. Dense
  mode works unchanged; hybrid mode raises :class:`~reference.EngineFeatureError`.

A document is the unit of change (:mod:`reference.store._writes`): an ingest writes a document's chunks
under a new ``generation`` and then deletes the document's rows of every other generation. While two
generations of a document are stored, a search keeps, per document, only the hits of the OLDEST one it
sees (:func:`reference.store._hits.current_rows`): the old version stays the answer until its
deletion commits the new one, and no reply ever mixes the two.

pymilvus is imported lazily: the pure post-processing core of :mod:`reference` must not pay for (or
require) the Milvus client.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .._errors import StoreError
from ._ingest import MAX_CATEGORY_BYTES, MAX_DOC_ID_BYTES, MAX_TEXT_BYTES

if TYPE_CHECKING:
    from pymilvus import MilvusClient

__all__ = [
    "ABSENT",
    "FIELDS",
    "OUTPUT_FIELDS",
    "build_schema",
    "category_filter",
    "check_fields",
    "collection_features",
    "doc_filter",
    "quoted",
]

KEY_FIELD, DOC_FIELD, INDEX_FIELD, TEXT_FIELD = "row_key", "doc_id", "chunk_index", "text"
GEN_FIELD = "generation"
DENSE_FIELD, SPARSE_FIELD, CATEGORY_FIELD, SOURCE_FIELD = "dense", "sparse", "category", "source_type"
# Explicit output fields: Lite returns every field without them, the server only the key.
OUTPUT_FIELDS = [DOC_FIELD, INDEX_FIELD, TEXT_FIELD, CATEGORY_FIELD, SOURCE_FIELD, GEN_FIELD]
_BM25_FUNCTION = "text_bm25"
# An absent category or sourceType on an engine without nullable fields; see the module docstring.
ABSENT = "\x00"
_HNSW_BUILD = {"M": 16, "efConstruction": 200}


FIELDS = (
    KEY_FIELD,
    DOC_FIELD,
    INDEX_FIELD,
    GEN_FIELD,
    TEXT_FIELD,
    DENSE_FIELD,
    SPARSE_FIELD,
    CATEGORY_FIELD,
    SOURCE_FIELD,
)


def category_filter(category: str) -> str:
    """The boolean expression ``category == "<c>"`` with backslashes and double quotes escaped.

    A category holding a NUL character matches nothing: no chunk can have one, and on an engine without
    nullable fields :data:`ABSENT` (a NUL) marks chunks that have no category at all.
    """
    if "\x00" in category:
        return f'{KEY_FIELD} == ""'  # every key is "sha256(docId)#chunkIndex@generation", never empty
    return f"{CATEGORY_FIELD} == {quoted(category)}"


def quoted(value: str) -> str:
    """``value`` as a string literal of Milvus's boolean expressions: backslashes, double quotes and line
    breaks escaped."""
    escaped = value.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n").replace("\r", "\\r")
    return f'"{escaped}"'


def doc_filter(doc_ids: list[str], *, except_generation: int | None = None) -> str:
    """Rows of these documents, all of them or those of every generation but ``except_generation``."""
    expr = f"{DOC_FIELD} in [{', '.join(quoted(d) for d in doc_ids)}]"
    return expr if except_generation is None else f"{expr} and {GEN_FIELD} != {int(except_generation)}"


def build_schema(
    client: MilvusClient, dim: int, index_type: str, *, nullable: bool = True, bm25: bool = True
) -> tuple[Any, Any]:
    """The collection schema and its index parameters; ``nullable``/``bm25`` pick the variant."""
    from pymilvus import DataType, Function, FunctionType

    schema = client.create_schema(auto_id=False, enable_dynamic_field=False)
    # docId, "#", chunkIndex and "@", generation: two INT64s of at most 20 characters each.
    schema.add_field(KEY_FIELD, DataType.VARCHAR, is_primary=True, max_length=MAX_DOC_ID_BYTES + 48)
    schema.add_field(DOC_FIELD, DataType.VARCHAR, max_length=MAX_DOC_ID_BYTES)
    schema.add_field(INDEX_FIELD, DataType.INT64)
    schema.add_field(GEN_FIELD, DataType.INT64)
    analyzer = {"enable_analyzer": True, "analyzer_params": {"type": "standard"}} if bm25 else {}
    schema.add_field(TEXT_FIELD, DataType.VARCHAR, max_length=MAX_TEXT_BYTES, **analyzer)
    schema.add_field(DENSE_FIELD, DataType.FLOAT_VECTOR, dim=dim)
    if bm25:
        schema.add_field(SPARSE_FIELD, DataType.SPARSE_FLOAT_VECTOR)
    null = {"nullable": True} if nullable else {}
    schema.add_field(CATEGORY_FIELD, DataType.VARCHAR, max_length=MAX_CATEGORY_BYTES, **null)
    schema.add_field(SOURCE_FIELD, DataType.VARCHAR, max_length=MAX_CATEGORY_BYTES, **null)
    index = client.prepare_index_params()
    build = _HNSW_BUILD if index_type == "HNSW" else {}
    index.add_index(DENSE_FIELD, index_type=index_type, metric_type="L2", params=build)
    if bm25:
        schema.add_function(
            Function(
                name=_BM25_FUNCTION,
                function_type=FunctionType.BM25,
                input_field_names=[TEXT_FIELD],
                output_field_names=[SPARSE_FIELD],
            )
        )
        index.add_index(SPARSE_FIELD, index_type="SPARSE_INVERTED_INDEX", metric_type="BM25")
    return schema, index


def collection_features(info: dict[str, Any]) -> tuple[bool, bool]:
    """``(nullable, bm25)`` of a described collection: what its schema actually holds."""
    fields = {f["name"]: f for f in info.get("fields", [])}
    nullable = all(bool(fields.get(name, {}).get("nullable")) for name in (CATEGORY_FIELD, SOURCE_FIELD))
    # Lite 2.5.1 lists no functions in a description; its sparse field still says it is one's output.
    sparse = fields.get(SPARSE_FIELD, {})
    bm25 = bool(sparse.get("is_function_output")) or any(
        SPARSE_FIELD in (f.get("output_field_names") or ()) for f in info.get("functions") or ()
    )
    return nullable, bm25 and bool(sparse)


def check_fields(info: dict[str, Any], collection: str, dim: int) -> None:
    """Refuse a collection this store did not create, or one of another dimension."""
    fields = {f["name"]: f for f in info.get("fields", [])}
    # The sparse field exists only where the engine has BM25; every other field always does.
    missing = [name for name in FIELDS if name not in fields and name != SPARSE_FIELD]
    if missing:
        raise StoreError(
            f"collection {collection!r} exists but lacks the fields {', '.join(missing)}: it was "
            "not created by this store, or by a version before documents had generations; pick "
            "another collection name, or drop it and ingest again"
        )
    found = int(fields[DENSE_FIELD].get("params", {}).get("dim", -1))
    if found != dim:
        raise StoreError(
            f"collection {collection!r} holds {found}-dimensional vectors but the store was opened "
            f"with dim {dim}; open it with dim {found}, or use another collection"
        )

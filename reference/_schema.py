"""The reference store's collection schema: field names, creation, and checking an existing one.

Schema (created by :meth:`MilvusKnowledgeStore.ensure_collection`):

==============  =====================  ==============================================================
field           type                   notes
==============  =====================  ==============================================================
evidence_key    VARCHAR, primary key   ``docId#chunkIndex``; upsert on it makes re-ingesting idempotent
doc_id          VARCHAR
chunk_index     INT64
text            VARCHAR                ``enable_analyzer``, ``standard`` analyzer, input of BM25
dense           FLOAT_VECTOR(dim)      index FLAT (default) or HNSW, metric L2 (squared Euclidean)
sparse          SPARSE_FLOAT_VECTOR    output of a BM25 ``Function`` on ``text``; SPARSE_INVERTED_INDEX
category        VARCHAR, nullable      absent stays null, never ""
source_type     VARCHAR, nullable
==============  =====================  ==============================================================

pymilvus is imported lazily: the pure post-processing core of :mod:`reference` must not pay for (or
require) the Milvus client.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ._errors import StoreError
from ._ingest import MAX_CATEGORY_BYTES, MAX_DOC_ID_BYTES, MAX_TEXT_BYTES

if TYPE_CHECKING:
    from pymilvus import MilvusClient

__all__ = ["FIELDS", "OUTPUT_FIELDS", "build_schema", "category_filter", "check_fields"]

KEY_FIELD, DOC_FIELD, INDEX_FIELD, TEXT_FIELD = "evidence_key", "doc_id", "chunk_index", "text"
DENSE_FIELD, SPARSE_FIELD, CATEGORY_FIELD, SOURCE_FIELD = "dense", "sparse", "category", "source_type"
# Explicit output fields: Lite returns every field without them, the server only the key.
OUTPUT_FIELDS = [DOC_FIELD, INDEX_FIELD, TEXT_FIELD, CATEGORY_FIELD, SOURCE_FIELD]
_BM25_FUNCTION = "text_bm25"
_HNSW_BUILD = {"M": 16, "efConstruction": 200}


FIELDS = (
    KEY_FIELD,
    DOC_FIELD,
    INDEX_FIELD,
    TEXT_FIELD,
    DENSE_FIELD,
    SPARSE_FIELD,
    CATEGORY_FIELD,
    SOURCE_FIELD,
)


def category_filter(category: str) -> str:
    """The boolean expression ``category == "<c>"`` with backslashes and double quotes escaped."""
    escaped = category.replace("\\", "\\\\").replace('"', '\\"')
    return f'{CATEGORY_FIELD} == "{escaped}"'


def build_schema(client: MilvusClient, dim: int, index_type: str) -> tuple[Any, Any]:
    """The collection schema (BM25 Function included) and its index parameters."""
    from pymilvus import DataType, Function, FunctionType

    schema = client.create_schema(auto_id=False, enable_dynamic_field=False)
    schema.add_field(KEY_FIELD, DataType.VARCHAR, is_primary=True, max_length=MAX_DOC_ID_BYTES + 24)
    schema.add_field(DOC_FIELD, DataType.VARCHAR, max_length=MAX_DOC_ID_BYTES)
    schema.add_field(INDEX_FIELD, DataType.INT64)
    schema.add_field(
        TEXT_FIELD,
        DataType.VARCHAR,
        max_length=MAX_TEXT_BYTES,
        enable_analyzer=True,
        analyzer_params={"type": "standard"},
    )
    schema.add_field(DENSE_FIELD, DataType.FLOAT_VECTOR, dim=dim)
    schema.add_field(SPARSE_FIELD, DataType.SPARSE_FLOAT_VECTOR)
    schema.add_field(CATEGORY_FIELD, DataType.VARCHAR, max_length=MAX_CATEGORY_BYTES, nullable=True)
    schema.add_field(SOURCE_FIELD, DataType.VARCHAR, max_length=MAX_CATEGORY_BYTES, nullable=True)
    schema.add_function(
        Function(
            name=_BM25_FUNCTION,
            function_type=FunctionType.BM25,
            input_field_names=[TEXT_FIELD],
            output_field_names=[SPARSE_FIELD],
        )
    )
    index = client.prepare_index_params()
    build = _HNSW_BUILD if index_type == "HNSW" else {}
    index.add_index(DENSE_FIELD, index_type=index_type, metric_type="L2", params=build)
    index.add_index(SPARSE_FIELD, index_type="SPARSE_INVERTED_INDEX", metric_type="BM25")
    return schema, index


def check_fields(info: dict[str, Any], collection: str, dim: int) -> None:
    """Refuse a collection this store did not create, or one of another dimension."""
    fields = {f["name"]: f for f in info.get("fields", [])}
    missing = [name for name in FIELDS if name not in fields]
    if missing:
        raise StoreError(
            f"collection {collection!r} exists but lacks the fields {', '.join(missing)}: it was "
            "not created by this store; pick another collection name or drop it"
        )
    found = int(fields[DENSE_FIELD].get("params", {}).get("dim", -1))
    if found != dim:
        raise StoreError(
            f"collection {collection!r} holds {found}-dimensional vectors but the store was opened "
            f"with dim {dim}; open it with dim {found}, or use another collection"
        )

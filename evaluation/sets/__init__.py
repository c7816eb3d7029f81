"""Labelled sets: the values (``_values``), the one validator every set passes (``_validate``) and what
it finds only suspicious (``_warnings``), the project's JSON Lines format (``_jsonl``), the BEIR layout
(``_beir``), the bundled set (``_bundled``) and a slice of a set (``_slice``)."""

from ._beir import CHUNKINGS, Chunking, load_beir_set, write_beir
from ._bundled import BUNDLED_NAME, bundled_beir_path, bundled_data_dir, bundled_jsonl_paths
from ._jsonl import load_jsonl_set, read_corpus, read_queries
from ._slice import slice_set
from ._validate import check_trec_ids, validate_set
from ._values import (
    KINDS,
    MAX_GRADE,
    LabelledChunk,
    LabelledQuery,
    LabelledSet,
    QueryKind,
    TrecDocids,
    trec_docid,
)

__all__ = [
    "BUNDLED_NAME",
    "CHUNKINGS",
    "KINDS",
    "MAX_GRADE",
    "Chunking",
    "LabelledChunk",
    "LabelledQuery",
    "LabelledSet",
    "QueryKind",
    "TrecDocids",
    "bundled_beir_path",
    "bundled_data_dir",
    "bundled_jsonl_paths",
    "check_trec_ids",
    "load_beir_set",
    "load_jsonl_set",
    "read_corpus",
    "read_queries",
    "slice_set",
    "trec_docid",
    "validate_set",
    "write_beir",
]

"""Labelled sets in the BEIR layout: read one, or write a labelled set in it.

A BEIR dataset is a folder::

    corpus.jsonl       {"_id": "doc1", "title": "...", "text": "...", "metadata": {...}}
    queries.jsonl      {"_id": "q1", "text": "...", "metadata": {...}}
    qrels/<split>.tsv  query-id <TAB> corpus-id <TAB> score, after one header line

**Documents to chunks.** A chunk is keyed ``docId#chunkIndex``. ``chunks``:

- ``keyed``: every ``_id`` is such a key (a corpus already split into chunks, like the bundled copy):
  chunk ``chunkIndex`` of document ``docId``, so the per-document cap of post-processing sees the
  documents. The TREC files use the ``_id``.
- ``document``: one chunk per BEIR document, ``docId`` = ``_id`` and ``chunkIndex`` 0. The TREC files
  use the ``_id``, so they go with the dataset's own qrels and with other systems' runs on it.
- ``auto``: ``keyed`` when every ``_id`` is a key, otherwise ``document``; the set's ``layout`` says
  which was chosen.

The chunk text is ``title`` and ``text`` joined by a space, as BEIR's dense models read a document.

**Queries.** A query is evaluated when the split's qrels judge it, in the order of ``queries.jsonl``.
A score of 1 or more is its grade; 0 or less means judged not relevant. A query judged with nothing
relevant is unanswerable, and so is a query with no qrels line whose metadata says ``"kind":
"unanswerable"``: nothing else in the layout can say that nothing answers a query.

**Metadata**, all optional, other keys ignored: a document's ``category`` and ``sourceType``; a
query's ``kind``, ``category`` and ``note``, with the meaning they have in the JSON Lines format.

Every id must be a TREC token (no whitespace), since the run and qrels files carry them as fields.
Every problem is a :class:`LabelledSetError` naming ``FILE:LINE`` and what to change.
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path
from typing import Any, Literal

from .._errors import LabelledSetError
from ._jsonl import _objects
from ._validate import Fail, check_chunk, check_query, check_unique, decode_line, validate_set
from ._values import LabelledChunk, LabelledQuery, LabelledSet
from ._warnings import name_some

__all__ = ["CHUNKINGS", "Chunking", "load_beir_set", "write_beir"]

Chunking = Literal["auto", "keyed", "document"]
CHUNKINGS: tuple[Chunking, ...] = ("auto", "keyed", "document")
_KEY = re.compile(r"(.+)#(0|[1-9][0-9]*)")
_SCORE = re.compile(r"-?[0-9]+")
_LAYOUTS = {
    "keyed": "BEIR layout, split {split}: every _id is docId#chunkIndex, one chunk each",
    "document": "BEIR layout, split {split}: one chunk per document",
}


def _text(data: dict[str, Any], field: str, fail: Fail) -> str:
    value = data.get(field, "" if field == "title" else None)
    if isinstance(value, int) and not isinstance(value, bool) and field == "_id":
        value = str(value)  # some BEIR exports write numeric ids
    if not isinstance(value, str):
        raise fail(f"{field!r} must be a string" if field in data else f"missing field {field!r}")
    return value


def _metadata(data: dict[str, Any], fail: Fail) -> dict[str, Any]:
    meta = data.get("metadata") or {}
    if not isinstance(meta, dict):
        raise fail("'metadata' must be an object")
    return meta


def _corpus(path: Path, chunks: Chunking) -> tuple[dict[str, LabelledChunk], Chunking]:
    """``_id`` -> its chunk, and the chunking chosen."""
    docs: list[tuple[str, str, dict[str, Any], Fail]] = []
    seen: dict[str, int] = {}
    for number, data, fail in _objects(path, "_id and text"):
        doc_id = _text(data, "_id", fail)
        if not doc_id:
            raise fail("'_id' is empty; every document needs an id")
        check_unique(seen, doc_id, "_id", number, fail)
        title, text = _text(data, "title", fail), _text(data, "text", fail)
        docs.append((doc_id, f"{title} {text}" if title.strip() else text, _metadata(data, fail), fail))
    if not docs:
        raise LabelledSetError(
            "the file holds no documents; write one JSON object per line", source=str(path)
        )
    if chunks == "auto":
        chunks = "keyed" if all(_KEY.fullmatch(d[0]) for d in docs) else "document"
    out: dict[str, LabelledChunk] = {}
    for doc_id, text, meta, fail in docs:
        match = _KEY.fullmatch(doc_id)
        if chunks == "keyed" and match is None:
            raise fail(
                f"_id {doc_id!r} is not docId#chunkIndex; use chunks 'document' (--beir-chunks document) "
                "to make every document one chunk",
                item_id=doc_id,
            )
        doc, index = (match.group(1), int(match.group(2))) if chunks == "keyed" and match else (doc_id, 0)
        out[doc_id] = check_chunk(
            doc, index, text, category=meta.get("category"), source_type=meta.get("sourceType"), fail=fail
        )
    return out, chunks


def _qrels(path: Path, keys: dict[str, str]) -> tuple[dict[str, dict[str, int]], dict[str, int]]:
    """query id -> chunk key -> grade (0 or less kept as 0: judged, not relevant), and query id -> the
    first line judging it."""
    source = str(path)
    try:
        raw = path.read_bytes()
    except OSError as exc:
        raise LabelledSetError(f"cannot open the file: {exc.strerror or exc}", source=source) from None
    judged: dict[str, dict[str, int]] = {}
    first_line: dict[str, int] = {}
    for number, data in enumerate(raw.splitlines(), start=1):

        def fail(message: str, *, item_id: str | None = None, number: int = number) -> LabelledSetError:
            return LabelledSetError(message, source=source, line=number, item_id=item_id)

        line = decode_line(data, number == 1, fail)
        if not line.strip():
            continue
        fields = line.rstrip("\r\n").split("\t")
        score = fields[2].strip() if len(fields) == 3 else ""
        if number == 1 and not _SCORE.fullmatch(score):
            continue  # the header line, query-id corpus-id score
        if len(fields) != 3 or not _SCORE.fullmatch(score):
            raise fail("a qrels line is query-id<TAB>corpus-id<TAB>score, the score a whole number")
        qid, doc_id = fields[0].strip(), fields[1].strip()
        if doc_id not in keys:
            raise fail(
                f"query {qid!r}: corpus-id {doc_id!r} is not in corpus.jsonl; add the document or remove "
                "the line",
                item_id=doc_id,
            )
        grades = judged.setdefault(qid, {})
        first_line.setdefault(qid, number)
        if keys[doc_id] in grades:
            raise fail(f"{qid} {doc_id} is judged twice; keep one line", item_id=qid)
        grades[keys[doc_id]] = max(0, int(score))
    return judged, first_line


def load_beir_set(
    directory: str | os.PathLike[str],
    *,
    split: str = "test",
    chunks: Chunking = "auto",
    name: str | None = None,
) -> LabelledSet:
    """Read a BEIR-layout folder as a labelled set (see the module's documentation for the rules)."""
    if chunks not in CHUNKINGS:
        raise LabelledSetError(f"chunks is {chunks!r}; use one of {', '.join(CHUNKINGS)}")
    base = Path(directory)
    if not base.is_dir():
        raise LabelledSetError(
            "not a folder; give the BEIR dataset's folder (corpus.jsonl, queries.jsonl, qrels/)",
            source=str(base),
        )
    qrels_path = base / "qrels" / f"{split}.tsv"
    if not qrels_path.is_file():
        found = sorted(p.stem for p in (base / "qrels").glob("*.tsv"))
        raise LabelledSetError(
            f"no qrels for split {split!r}; the splits here are {', '.join(found) or 'none'}",
            source=str(qrels_path),
        )
    by_id, chosen = _corpus(base / "corpus.jsonl", chunks)
    judged, first_line = _qrels(qrels_path, {doc_id: c.evidence_key for doc_id, c in by_id.items()})
    categories = {c.category for c in by_id.values() if c.category is not None}
    queries: list[LabelledQuery] = []
    seen: dict[str, int] = {}
    left_out: list[str] = []
    nothing_relevant: list[str] = []
    for number, data, fail in _objects(base / "queries.jsonl", "_id and text"):
        qid = _text(data, "_id", fail)
        meta = _metadata(data, fail)
        check_unique(seen, qid, "query _id", number, fail)
        if qid not in judged and meta.get("kind") != "unanswerable":
            left_out.append(qid)  # another split's query, or one no split judges
            continue
        relevant = {key: grade for key, grade in judged.get(qid, {}).items() if grade >= 1}
        if qid in judged and not relevant and meta.get("kind") is None:
            nothing_relevant.append(qid)
        queries.append(
            check_query(
                qid, _text(data, "text", fail), relevant, fields=meta, categories=categories, fail=fail
            )
        )
    missing = sorted(set(judged) - set(seen), key=first_line.__getitem__)
    if missing:
        raise LabelledSetError(
            f"query {missing[0]!r} is judged but not in queries.jsonl; add it or remove its lines",
            source=str(qrels_path),
            line=first_line[missing[0]],
            item_id=missing[0],
        )
    if not queries:
        raise LabelledSetError(f"split {split!r} judges no query", source=str(qrels_path))
    return validate_set(
        LabelledSet(
            corpus=tuple(by_id.values()),
            queries=tuple(queries),
            corpus_source=str(base / "corpus.jsonl"),
            queries_source=str(base / "queries.jsonl"),
            qrels_source=str(qrels_path),
            layout=_LAYOUTS[chosen].format(split=split),
            trec_docids="doc_id" if chosen == "document" else "evidence_key",
            name=name or base.name,
            warnings=_read_warnings(qrels_path, left_out, nothing_relevant),
        )
    )


def _read_warnings(qrels_path: Path, left_out: list[str], nothing_relevant: list[str]) -> tuple[str, ...]:
    """What only the reader sees: queries it left out, and queries it took as unanswerable."""
    out = []
    if left_out:
        others = sorted(p.name for p in qrels_path.parent.glob("*.tsv") if p != qrels_path)
        where = f"the other qrels here: {', '.join(others)}" if others else "no other split is here"
        n = len(left_out)
        out.append(
            f"{n} {'query' if n == 1 else 'queries'} of queries.jsonl {'is' if n == 1 else 'are'} not "
            f"judged by {qrels_path.name} and left out "
            f"({name_some(left_out)}; {where}); give a query kind unanswerable to keep it unjudged"
        )
    if nothing_relevant:
        out.append(
            f"{len(nothing_relevant)} {'query is' if len(nothing_relevant) == 1 else 'queries are'} judged "
            f"with nothing relevant (every score 0 or less) and counted as unanswerable "
            f"({name_some(nothing_relevant)}); say kind unanswerable in their metadata to make it explicit"
        )
    return tuple(out)


def write_beir(labelled: LabelledSet, directory: str | os.PathLike[str], *, split: str = "test") -> Path:
    """Write ``labelled`` as a BEIR folder, one document per chunk with ``_id`` = its evidence key.

    Read back with ``chunks="keyed"`` (or ``auto``) it is the same set. Returns the folder.
    """
    base = Path(directory)
    (base / "qrels").mkdir(parents=True, exist_ok=True)

    def line(data: dict[str, Any]) -> str:
        return json.dumps(data, ensure_ascii=False) + "\n"

    corpus = []
    for c in labelled.corpus:
        meta = {k: v for k, v in (("category", c.category), ("sourceType", c.source_type)) if v is not None}
        corpus.append(line({"_id": c.evidence_key, "title": "", "text": c.text, "metadata": meta}))
    (base / "corpus.jsonl").write_text("".join(corpus), encoding="utf-8")
    queries = []
    for q in labelled.queries:
        meta = {"kind": q.kind, "category": q.category, "note": q.note}
        queries.append(line({"_id": q.id, "text": q.query, "metadata": {k: v for k, v in meta.items() if v}}))
    (base / "queries.jsonl").write_text("".join(queries), encoding="utf-8")
    rows = ["query-id\tcorpus-id\tscore\n"]
    rows += [f"{q.id}\t{key}\t{grade}\n" for q in labelled.queries for key, grade in q.relevant.items()]
    (base / "qrels" / f"{split}.tsv").write_text("".join(rows), encoding="utf-8")
    return base

"""The one validator of labelled sets: every check a set passes, whichever file format it came from.

The readers (:mod:`._jsonl`, :mod:`._beir`) parse lines and call these checks with a ``fail(message)``
that makes the error naming the file and line; :func:`validate_set` runs the checks that need the whole
set, so a set built in code is held to the same rules. A new check goes here, once, for both formats.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from typing import Any

from .._errors import LabelledSetError
from ._values import KINDS, MAX_GRADE, LabelledChunk, LabelledQuery, LabelledSet

__all__ = [
    "Fail",
    "check_chunk",
    "check_grades",
    "check_known_fields",
    "check_query",
    "check_trec_ids",
    "check_trec_token",
    "check_unique",
    "validate_set",
]

Fail = Callable[[str], LabelledSetError]
_SPACE = re.compile(r"\s")


def check_trec_token(value: str, what: str, fail: Fail) -> str:
    """``value`` if a TREC file can carry it as one field: not empty, no whitespace."""
    if not value:
        raise fail(f"{what} is empty; every {what} needs a name")
    if _SPACE.search(value):
        raise fail(
            f"{what} {value!r} holds whitespace, which TREC run and qrels files cannot carry; "
            "rename it without spaces, tabs or line breaks"
        )
    return value


def check_unique(seen: dict[str, int], value: str, what: str, number: int, fail: Fail) -> None:
    """Refuse ``value`` when it was seen before (``seen`` maps values to the line they were on)."""
    if value in seen:
        raise fail(f"{what} {value!r} was already used on line {seen[value]}; ids must be unique")
    seen[value] = number


def check_chunk(
    doc_id: Any, chunk_index: Any, text: Any, *, category: Any, source_type: Any, fail: Fail
) -> LabelledChunk:
    """A chunk whose id can be written to a TREC file and whose text can be found."""
    if not isinstance(doc_id, str) or not doc_id:
        raise fail("the document id is empty; every chunk needs its document id")
    if isinstance(chunk_index, bool) or not isinstance(chunk_index, int) or chunk_index < 0:
        raise fail(f"chunk {doc_id!r}: chunkIndex is {chunk_index!r}; chunk indexes are whole numbers from 0")
    check_trec_token(doc_id, "document id", fail)
    if not isinstance(text, str) or not text.strip():
        raise fail(f"chunk {doc_id!r}#{chunk_index}: text is empty; an empty chunk can never be found")
    for name, value in (("category", category), ("sourceType", source_type)):
        if value is not None and not isinstance(value, str):
            raise fail(f"chunk {doc_id!r}#{chunk_index}: {name} must be a string")
    return LabelledChunk(
        doc_id=doc_id, chunk_index=chunk_index, text=text, category=category, source_type=source_type
    )


def check_grades(value: Any, keys: set[str], fail: Fail) -> dict[str, int]:
    """A ``relevant`` object of the JSON Lines format: known evidence keys to grades 1 to 3."""
    if value is None:
        raise fail("missing field 'relevant'; use {} for a query nothing in the corpus answers")
    if not isinstance(value, Mapping):
        raise fail("'relevant' must be an object mapping docId#chunkIndex to a grade, e.g. {\"faq#0\": 2}")
    out: dict[str, int] = {}
    for key, grade in value.items():
        if key not in keys:
            raise fail(f"relevant chunk {key!r} is not in the corpus; labels use docId#chunkIndex")
        if isinstance(grade, bool) or not isinstance(grade, int) or not 1 <= grade <= MAX_GRADE:
            raise fail(
                f"grade {grade!r} for {key!r} must be 1 (related), 2 (answers it) or 3 (best answer); "
                "leave irrelevant chunks out"
            )
        out[key] = grade
    return out


def check_known_fields(data: Mapping[str, Any], fields: tuple[str, ...], fail: Fail) -> None:
    """Refuse a field the format does not have (a typo would otherwise be dropped silently)."""
    unknown = sorted(set(data) - set(fields))
    if unknown:
        raise fail(f"unknown field {unknown[0]!r}; the fields are {', '.join(fields)}")


def check_query(
    qid: str,
    text: Any,
    relevant: dict[str, int],
    *,
    fields: Mapping[str, Any],
    categories: set[str],
    fail: Fail,
) -> LabelledQuery:
    """A query whose id, text, kind, labels, category and note agree.

    ``fields`` holds the optional ``kind``, ``category`` and ``note`` (a JSON Lines row, a BEIR query's
    metadata). ``kind`` absent means ``standard`` when something is labelled relevant, else ``unanswerable``.
    """
    kind, category, note = fields.get("kind"), fields.get("category"), fields.get("note")
    check_trec_token(qid, "query id", fail)
    if not isinstance(text, str) or not text.strip():
        raise fail("the query text is empty; every query needs its text")
    if kind is None:
        kind = "standard" if relevant else "unanswerable"
    if kind not in KINDS:
        raise fail(f"kind {kind!r} is not one of {', '.join(KINDS)}")
    if kind == "unanswerable" and relevant:
        raise fail("an unanswerable query must have no relevant chunk; drop the labels or change its kind")
    if kind != "unanswerable" and not relevant:
        raise fail(f"a {kind} query needs at least one relevant chunk; label one or use kind unanswerable")
    if category is not None and (not isinstance(category, str) or category not in categories):
        known = ", ".join(sorted(categories)) or "none"
        raise fail(f"category {category!r} is on no chunk of the corpus (categories: {known})")
    if note is not None and not isinstance(note, str):
        raise fail("'note' must be a string")
    return LabelledQuery(id=qid, query=text, kind=kind, category=category, relevant=relevant, note=note)


def check_trec_ids(labelled: LabelledSet) -> None:
    """Refuse a set whose query ids or chunk ids a TREC file cannot hold (empty, or with whitespace)."""
    for what, ids, source in (
        ("query id", (q.id for q in labelled.queries), labelled.queries_source),
        ("evidence key", (c.evidence_key for c in labelled.corpus), labelled.corpus_source),
    ):
        for value in ids:
            check_trec_token(value, what, lambda message, s=source: LabelledSetError(message, source=s))


def validate_set(labelled: LabelledSet) -> LabelledSet:
    """The checks that need the whole set; returns it. The readers have run the per-line checks."""
    if not labelled.corpus:
        raise LabelledSetError("the corpus holds no chunks", source=labelled.corpus_source)
    if not labelled.queries:
        raise LabelledSetError("the set holds no queries", source=labelled.queries_source)
    keys: dict[str, int] = {}
    for chunk in labelled.corpus:
        keys[chunk.evidence_key] = keys.get(chunk.evidence_key, 0) + 1
    doubled = sorted(key for key, n in keys.items() if n > 1)
    if doubled:
        raise LabelledSetError(
            f"chunk {doubled[0]} appears {keys[doubled[0]]} times; every docId#chunkIndex must be unique",
            source=labelled.corpus_source,
        )
    seen: set[str] = set()
    for q in labelled.queries:
        if q.id in seen:
            raise LabelledSetError(
                f"query id {q.id!r} is used twice; query ids must be unique", source=labelled.queries_source
            )
        seen.add(q.id)
        unknown = sorted(set(q.relevant) - set(keys))
        if unknown:
            raise LabelledSetError(
                f"query {q.id!r} labels {unknown[0]!r}, which is not in the corpus",
                source=labelled.qrels_source or labelled.queries_source,
            )
    check_trec_ids(labelled)
    return labelled

"""The one validator of labelled sets: every check a set passes, whichever file format it came from.

The readers (:mod:`._jsonl`, :mod:`._beir`) parse lines and call these checks with a ``fail(message)``
that makes the error naming the file and line; :func:`validate_set` runs the checks that need the whole
set (and the per-item ones again, so a set built in code is held to the same rules), and adds what is
only suspicious to the set's ``warnings`` (:mod:`._warnings`). A new check goes here, once, for both
formats. Every error names the file, the line where there is one, and the query or chunk id.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any, Protocol

from .._errors import LabelledSetError
from ._values import KINDS, MAX_GRADE, LabelledChunk, LabelledQuery, LabelledSet
from ._warnings import set_warnings

__all__ = [
    "Fail",
    "check_chunk",
    "check_encodable",
    "check_grades",
    "check_known_fields",
    "check_query",
    "check_trec_ids",
    "check_trec_token",
    "check_unique",
    "decode_line",
    "validate_set",
]

_SPACE = re.compile(r"\s")


class Fail(Protocol):
    """Makes the error for one line of one file; ``item_id`` is the query or chunk it is about."""

    def __call__(self, message: str, *, item_id: str | None = None) -> LabelledSetError: ...


#: How the first bytes of a file that is no text file at all look (a dataset often comes compressed).
_NOT_TEXT = {
    b"\x1f\x8b": "a gzip file; unpack it (gunzip) first",
    b"PK\x03\x04": "a zip file; unpack it first",
    b"\xff\xfe": "UTF-16 text; save the file as UTF-8",
    b"\xfe\xff": "UTF-16 text; save the file as UTF-8",
}


def decode_line(raw: bytes, first: bool, fail: Fail) -> str:
    """One line of a labelled set's file as text; a byte that is not UTF-8 is an error naming it."""
    try:
        return raw.decode("utf-8-sig" if first else "utf-8")
    except UnicodeDecodeError as exc:
        for magic, what in _NOT_TEXT.items():
            if first and raw.startswith(magic):
                raise fail(f"not UTF-8 text but {what}") from None
        bad = raw[exc.start : exc.start + 1].hex()
        raise fail(
            f"not UTF-8 text (byte 0x{bad} at byte {exc.start + 1} of the line); save the file as UTF-8"
        ) from None


def check_encodable(value: str, what: str, fail: Fail, *, item_id: str | None = None) -> str:
    """``value`` if it can be written as UTF-8: JSON's ``\\ud800`` escapes can make text that cannot."""
    try:
        value.encode("utf-8")
    except UnicodeEncodeError as exc:
        char = f"\\u{ord(value[exc.start]):04x}"
        raise fail(
            f"{what} holds an unpaired surrogate ({char}), which no UTF-8 file can carry; "
            "write the character itself, or a surrogate pair",
            item_id=item_id,
        ) from None
    return value


def check_trec_token(value: str, what: str, fail: Fail) -> str:
    """``value`` if a TREC file can carry it as one field: not empty, no whitespace, UTF-8."""
    if not value:
        raise fail(f"{what} is empty; every {what} needs a name")
    if _SPACE.search(value):
        raise fail(
            f"{what} {value!r} holds whitespace, which TREC run and qrels files cannot carry; "
            "rename it without spaces, tabs or line breaks",
            item_id=value,
        )
    return check_encodable(value, f"{what} {value!r}", fail, item_id=value)


def check_unique(seen: dict[str, int], value: str, what: str, number: int, fail: Fail) -> None:
    """Refuse ``value`` when it was seen before (``seen`` maps values to the line they were on)."""
    if value in seen:
        raise fail(
            f"{what} {value!r} was already used on line {seen[value]}; ids must be unique", item_id=value
        )
    seen[value] = number


def _check_text(text: Any, kind: str, fail: Fail, item_id: str) -> str:
    """Text of a ``kind`` ("chunk" or "query") that is not empty (nor only whitespace) and can be
    written as UTF-8; the message is only made when it fails (the validator sees every chunk twice)."""
    if not isinstance(text, str) or not text.strip():
        why = _EMPTY_CHUNK if kind == "chunk" else _EMPTY_QUERY
        raise fail(f"{kind} {item_id!r}: the text is empty; {why}", item_id=item_id)
    if not text.isascii():  # ASCII is always UTF-8; the rest is encoded once to find a lone surrogate
        check_encodable(text, f"{kind} {item_id!r}: the text", fail, item_id=item_id)
    return text


_EMPTY_CHUNK = "an empty chunk can never be found"
_EMPTY_QUERY = "every query needs its text"


def check_chunk(
    doc_id: Any, chunk_index: Any, text: Any, *, category: Any, source_type: Any, fail: Fail
) -> LabelledChunk:
    """A chunk whose id can be written to a TREC file and whose text can be found."""
    if not isinstance(doc_id, str) or not doc_id:
        raise fail("the document id is empty; every chunk needs its document id")
    if isinstance(chunk_index, bool) or not isinstance(chunk_index, int) or chunk_index < 0:
        raise fail(
            f"chunk {doc_id!r}: chunkIndex is {chunk_index!r}; chunk indexes are whole numbers from 0",
            item_id=doc_id,
        )
    check_trec_token(doc_id, "document id", fail)
    key = f"{doc_id}#{chunk_index}"
    _check_text(text, "chunk", fail, key)
    for name, value in (("category", category), ("sourceType", source_type)):
        if value is not None and not isinstance(value, str):
            raise fail(f"chunk {key!r}: {name} must be a string", item_id=key)
        if value is not None:
            check_encodable(value, f"chunk {key!r}: {name}", fail, item_id=key)
    return LabelledChunk(
        doc_id=doc_id, chunk_index=chunk_index, text=text, category=category, source_type=source_type
    )


def check_grades(value: Any, keys: set[str], fail: Fail, *, qid: str) -> dict[str, int]:
    """A ``relevant`` object of the JSON Lines format: known evidence keys to grades 1 to 3."""
    if value is None:
        raise fail(
            f"query {qid!r}: missing field 'relevant'; use {{}} for a query nothing in the corpus answers",
            item_id=qid,
        )
    if not isinstance(value, Mapping):
        raise fail(
            f"query {qid!r}: 'relevant' must be an object mapping docId#chunkIndex to a grade, "
            'e.g. {"faq#0": 2}',
            item_id=qid,
        )
    out: dict[str, int] = {}
    for key, grade in value.items():
        if key not in keys:
            raise fail(
                f"query {qid!r}: relevant chunk {key!r} is not in the corpus; labels use docId#chunkIndex",
                item_id=key,
            )
        if isinstance(grade, bool) or not isinstance(grade, int) or not 1 <= grade <= MAX_GRADE:
            raise fail(
                f"query {qid!r}: grade {grade!r} for {key!r} must be 1 (related), 2 (answers it) or 3 "
                "(best answer); leave irrelevant chunks out",
                item_id=qid,
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
    _check_text(text, "query", fail, qid)

    def wrong(message: str) -> LabelledSetError:
        return fail(f"query {qid!r}: {message}", item_id=qid)

    if kind is None:
        kind = "standard" if relevant else "unanswerable"
    if kind not in KINDS:
        raise wrong(f"kind {kind!r} is not one of {', '.join(KINDS)}")
    if kind == "unanswerable" and relevant:
        raise wrong("an unanswerable query must have no relevant chunk; drop the labels or change its kind")
    if kind != "unanswerable" and not relevant:
        raise wrong(f"a {kind} query needs at least one relevant chunk; label one or use kind unanswerable")
    if category is not None and (not isinstance(category, str) or category not in categories):
        known = ", ".join(sorted(categories)) or "none"
        raise wrong(f"category {category!r} is on no chunk of the corpus (categories: {known})")
    if note is not None and not isinstance(note, str):
        raise wrong("'note' must be a string")
    if note is not None:
        check_encodable(note, f"query {qid!r}: the note", fail, item_id=qid)
    return LabelledQuery(id=qid, query=text, kind=kind, category=category, relevant=relevant, note=note)


def _failing(source: str | None) -> Fail:
    def fail(message: str, *, item_id: str | None = None) -> LabelledSetError:
        return LabelledSetError(message, source=source, item_id=item_id)

    return fail


def check_trec_ids(labelled: LabelledSet) -> None:
    """Refuse a set whose query ids or chunk ids a TREC file cannot hold (empty, or with whitespace)."""
    for what, ids, source in (
        ("query id", (q.id for q in labelled.queries), labelled.queries_source),
        ("evidence key", (c.evidence_key for c in labelled.corpus), labelled.corpus_source),
    ):
        fail = _failing(source)
        for value in ids:
            check_trec_token(value, what, fail)


def validate_set(labelled: LabelledSet) -> LabelledSet:
    """The checks that need the whole set, and the per-item ones again; returns the set, its
    ``warnings`` completed with what is suspicious about the whole set (:func:`set_warnings`).

    The readers have run the per-line checks (with lines in their errors); a set built in code meets
    them here, naming its source file and the id.
    """
    corpus_fail, queries_fail = _failing(labelled.corpus_source), _failing(labelled.queries_source)
    if not labelled.corpus:
        raise corpus_fail("the corpus holds no chunks")
    if not labelled.queries:
        raise queries_fail("the set holds no queries")
    keys: dict[str, int] = {}
    for chunk in labelled.corpus:
        key = chunk.evidence_key
        keys[key] = keys.get(key, 0) + 1
        _check_text(chunk.text, "chunk", corpus_fail, key)
    doubled = sorted(key for key, n in keys.items() if n > 1)
    if doubled:
        raise corpus_fail(
            f"chunk {doubled[0]!r} appears {keys[doubled[0]]} times; every docId#chunkIndex must be unique",
            item_id=doubled[0],
        )
    seen: set[str] = set()
    for q in labelled.queries:
        if q.id in seen:
            raise queries_fail(f"query id {q.id!r} is used twice; query ids must be unique", item_id=q.id)
        seen.add(q.id)
        _check_text(q.query, "query", queries_fail, q.id)
        unknown = sorted(k for k in q.relevant if k not in keys)  # not a set difference: it walks keys
        if unknown:
            raise _failing(labelled.qrels_source or labelled.queries_source)(
                f"query {q.id!r} labels {unknown[0]!r}, which is not in the corpus", item_id=unknown[0]
            )
    if not labelled.answerable:
        raise _failing(labelled.qrels_source or labelled.queries_source)(
            f"no query has a relevant document (every one of the {len(labelled.queries)} queries is "
            "judged with nothing relevant, or not judged): no ranking measure exists for such a set; "
            "grade at least one relevant document per query the corpus answers"
        )
    check_trec_ids(labelled)
    warnings = tuple(dict.fromkeys((*labelled.warnings, *set_warnings(labelled))))
    return labelled if warnings == labelled.warnings else labelled.model_copy(update={"warnings": warnings})

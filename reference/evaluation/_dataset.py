"""A labelled query set: a corpus of chunks and queries with graded relevance, read from JSON Lines.

The corpus is the ingest format (:func:`reference.read_jsonl`). The queries file holds one object per
line (``reference/data/eval/README.md`` documents it)::

    {"id": "q017", "query": "when will my refund arrive", "kind": "standard", "category": "billing",
     "relevant": {"billing-refunds#0": 2, "billing-refunds#1": 1}, "note": "optional, free text"}

``relevant`` maps evidence keys (``docId#chunkIndex``) to grades: 1 related, 2 answers the query,
3 the best possible answer. An empty ``relevant`` means nothing in the corpus answers the query: it
must then have ``kind`` ``unanswerable`` (the default when ``kind`` is left out). Every problem is an
:class:`EvalSetError` naming ``FILE:LINE`` and what to change.
"""

from __future__ import annotations

import json
import os
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Mapping
from importlib import resources
from pathlib import Path
from typing import Any, Literal, get_args

from pydantic import BaseModel, ConfigDict

from .._errors import IngestError, RetrievalQualityError
from ..store._ingest import Chunk, read_jsonl

__all__ = [
    "KINDS",
    "MAX_GRADE",
    "EvalQuery",
    "EvalSet",
    "EvalSetError",
    "EvaluationError",
    "bundled_eval_paths",
    "load_eval_set",
    "make_query",
    "read_queries",
]

QueryKind = Literal["standard", "paraphrase", "exact_token", "cross_category", "unanswerable"]
KINDS: tuple[str, ...] = get_args(QueryKind)
TrecDocids = Literal["evidence_key", "doc_id"]
MAX_GRADE = 3
_FIELDS = ("id", "query", "kind", "category", "relevant", "note")


class EvaluationError(RetrievalQualityError):
    """Root of the evaluation and calibration errors."""


class EvalSetError(EvaluationError):
    """A labelled set that cannot be used; the message names the file and line when there is one."""

    def __init__(self, message: str, *, source: str | None = None, line: int | None = None) -> None:
        self.source = source
        self.line = line
        where = ""
        if source is not None:
            where = f"{source}:{line}: " if line is not None else f"{source}: "
        super().__init__(where + message)


class EvalQuery(BaseModel):
    """One labelled query. ``relevant`` maps evidence keys to grades; empty when nothing answers it."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    id: str
    query: str
    kind: QueryKind
    category: str | None = None
    relevant: dict[str, int]
    note: str | None = None

    @property
    def answerable(self) -> bool:
        """True when at least one chunk is labelled relevant."""
        return bool(self.relevant)


class EvalSet(BaseModel):
    """A corpus and the queries labelled against it, validated together.

    ``layout`` says where it came from (the JSON Lines files, or a BEIR folder and how its documents
    became chunks); ``trec_docids`` which id the exported TREC files use: the chunk's evidence key, or
    its document id where every document is one chunk (so the files match the dataset's own qrels).
    """

    model_config = ConfigDict(frozen=True)

    corpus: tuple[Chunk, ...]
    queries: tuple[EvalQuery, ...]
    corpus_source: str
    queries_source: str
    qrels_source: str | None = None
    layout: str = "JSON Lines (corpus and queries files)"
    trec_docids: TrecDocids = "evidence_key"

    @property
    def categories(self) -> tuple[str, ...]:
        """Every category that some chunk carries, sorted."""
        return tuple(sorted({c.category for c in self.corpus if c.category is not None}))

    def kind_counts(self) -> dict[str, int]:
        """How many queries of each kind, in :data:`KINDS` order, kinds with none left out."""
        counts: Counter[str] = Counter(q.kind for q in self.queries)
        return {kind: counts[kind] for kind in KINDS if counts[kind]}

    def slice(self, limit: int) -> EvalSet:
        """At most ``limit`` queries, taken in turn from each kind (file order within a kind).

        Every kind present stays present as long as ``limit`` allows, so a small slice still exercises
        the retry, the gates and both legs of hybrid search. The corpus is kept whole.
        """
        if isinstance(limit, bool) or not isinstance(limit, int) or limit < 1:
            raise EvaluationError(f"limit is {limit!r}; use a whole number of queries, at least 1")
        queues = {kind: [q for q in self.queries if q.kind == kind] for kind in KINDS}
        picked: set[str] = set()
        while len(picked) < min(limit, len(self.queries)):
            for kind in KINDS:
                if queues[kind] and len(picked) < limit:
                    picked.add(queues[kind].pop(0).id)
        kept = tuple(q for q in self.queries if q.id in picked)
        return self.model_copy(update={"queries": kept})


def bundled_eval_paths() -> tuple[Path, Path]:
    """The bundled set: (corpus.jsonl, queries.jsonl) under ``reference/data/eval/``."""
    base = Path(str(resources.files("reference") / "data" / "eval"))
    return base / "corpus.jsonl", base / "queries.jsonl"


def load_eval_set(
    corpus: str | os.PathLike[str] | None = None, queries: str | os.PathLike[str] | None = None
) -> EvalSet:
    """Read and cross-check a corpus and its queries; either left out means the bundled one."""
    default_corpus, default_queries = bundled_eval_paths()
    corpus_path = Path(corpus) if corpus is not None else default_corpus
    queries_path = Path(queries) if queries is not None else default_queries
    chunks = _read_corpus(corpus_path)
    categories = {c.category for c in chunks if c.category is not None}
    read = read_queries(queries_path, chunk_keys={c.evidence_key for c in chunks}, categories=categories)
    return EvalSet(
        corpus=tuple(chunks),
        queries=tuple(read),
        corpus_source=str(corpus_path),
        queries_source=str(queries_path),
    )


def _read_corpus(path: Path) -> list[Chunk]:
    try:
        chunks = list(read_jsonl(path))
    except IngestError as exc:
        # One error family for the whole set; the ingest message already names FILE:LINE.
        raise EvalSetError(str(exc)) from None
    counts = Counter(c.evidence_key for c in chunks)
    doubled = sorted(key for key, n in counts.items() if n > 1)
    if doubled:
        raise EvalSetError(
            f"chunk {doubled[0]} appears {counts[doubled[0]]} times; every docId#chunkIndex must be unique",
            source=str(path),
        )
    return chunks


def read_queries(
    path: str | os.PathLike[str], *, chunk_keys: Iterable[str], categories: Iterable[str]
) -> list[EvalQuery]:
    """Read and validate a queries file against the corpus's evidence keys and categories."""
    source = str(path)
    keys, known_categories = set(chunk_keys), set(categories)
    try:
        raw = Path(path).read_bytes()
    except OSError as exc:
        raise EvalSetError(f"cannot open the file: {exc.strerror or exc}", source=source) from None
    queries: list[EvalQuery] = []
    seen: dict[str, int] = {}
    for number, line in _lines(raw, source):
        query = _parse(line, number=number, source=source, keys=keys, categories=known_categories)
        if query.id in seen:
            raise EvalSetError(
                f"query id {query.id!r} was already used on line {seen[query.id]}; ids must be unique",
                source=source,
                line=number,
            )
        seen[query.id] = number
        queries.append(query)
    if not queries:
        raise EvalSetError("the file holds no queries; write one JSON object per line", source=source)
    return queries


def _lines(raw: bytes, source: str) -> Iterator[tuple[int, str]]:
    for number, chunk in enumerate(raw.splitlines(), start=1):
        try:
            line = chunk.decode("utf-8-sig" if number == 1 else "utf-8")
        except UnicodeDecodeError:
            raise EvalSetError("not UTF-8 text; save the file as UTF-8", source=source, line=number) from None
        if line.strip():
            yield number, line


def _parse(line: str, *, number: int, source: str, keys: set[str], categories: set[str]) -> EvalQuery:
    def fail(message: str) -> EvalSetError:
        return EvalSetError(message, source=source, line=number)

    try:
        data = json.loads(line)
    except json.JSONDecodeError as exc:
        raise fail(f"not valid JSON ({exc.msg}, column {exc.colno})") from None
    if not isinstance(data, dict):
        raise fail("each line must be a JSON object with at least query and relevant")
    unknown = sorted(set(data) - set(_FIELDS))
    if unknown:
        raise fail(f"unknown field {unknown[0]!r}; the fields are {', '.join(_FIELDS)}")
    text = data.get("query")
    if not isinstance(text, str) or not text.strip():
        raise fail("'query' must be a non-empty string")
    relevant = _relevant(data.get("relevant"), keys, fail)
    qid = data.get("id", f"line-{number}")
    if not isinstance(qid, str) or not qid.strip():
        raise fail("'id' must be a non-empty string")
    return make_query(
        qid,
        text,
        relevant,
        kind=data.get("kind"),
        category=data.get("category"),
        note=data.get("note"),
        categories=categories,
        fail=fail,
    )


def make_query(
    qid: str,
    text: str,
    relevant: dict[str, int],
    *,
    kind: Any,
    category: Any,
    note: Any,
    categories: set[str],
    fail: Callable[[str], EvalSetError],
) -> EvalQuery:
    """A query whose kind, labels, category and note agree; ``fail(message)`` makes the error to raise.

    ``kind`` None means ``standard`` when something is labelled relevant, else ``unanswerable``.
    """
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
    return EvalQuery(id=qid, query=text, kind=kind, category=category, relevant=relevant, note=note)


def _relevant(value: Any, keys: set[str], fail: Any) -> dict[str, int]:
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

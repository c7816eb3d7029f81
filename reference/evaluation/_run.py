"""Run a labelled set through ``lookup_knowledge`` in each search mode and keep what the metrics need.

One run = ingest the corpus into an empty collection, embed every query once, then for each query and
mode one :func:`reference.lookup_knowledge` call with the query's category (so the category retry runs
as it would in production). For paraphrase and exact-token queries a label check adds an unfiltered
dense search and a BM25-only search: a paraphrase should be found by dense only, an exact token by BM25
only, within the check depth.

The run keeps, per query and mode: the lookup path, the ranking of the candidates of the attempt that
was used (what the ranking metrics and the TREC run are made of) with the ranks of the labelled chunks
in it, the accepted evidence (with the distances needed to recompute ``qualityScore`` under another
``rag.max-l2-distance``) and the gates. :class:`EvalRun` is what ``evaluation.json`` holds and what
calibration reads back.
"""

from __future__ import annotations

import hashlib
import os
import time
from collections.abc import Callable, Sequence
from datetime import UTC, datetime
from importlib import metadata
from pathlib import Path
from typing import Any, Literal

from pydantic import ValidationError

from evaluation import bundled_data_dir, measure_names, per_query

from .._embed import Embedder, describe_embedder
from .._errors import StoreError
from .._lookup import LookupPath, lookup_knowledge
from .._models import Candidate, EvidenceBlock, RelevanceLevel, _Model
from .._settings import Settings
from ..store._schema import DOC_FIELD, INDEX_FIELD, SPARSE_FIELD
from ..store._store import MilvusKnowledgeStore
from ._dataset import EvalQuery, EvalSet, EvaluationError, QueryKind, TrecDocids, store_chunks

__all__ = [
    "EvalRun",
    "EvidenceRow",
    "LabelCheck",
    "ModeOutcome",
    "QueryOutcome",
    "SourceInfo",
    "load_run",
    "run_evaluation",
]

SearchMode = Literal["dense", "hybrid"]
RUN_FORMAT = 2  # 2: each mode keeps its ranking, metrics carry ir_measures' names
DEFAULT_KS = (1, 5, 10)
DEFAULT_CHECK_DEPTH = 5
CHECKED_KINDS = ("paraphrase", "exact_token")


class EvidenceRow(_Model):
    """An accepted evidence block, reduced to what the metrics and a re-normalization need."""

    doc_id: str
    chunk_index: int
    original_rank: int
    score: float | None
    score_label: Literal["dense", "hybrid"]
    dense_distance: float | None = None
    quality_score: float

    @property
    def evidence_key(self) -> str:
        return f"{self.doc_id}#{self.chunk_index}"

    @classmethod
    def of(cls, block: EvidenceBlock) -> EvidenceRow:
        return cls(
            doc_id=block.doc_id,
            chunk_index=block.chunk_index,
            original_rank=block.original_rank,
            score=block.score,
            score_label=block.score_label,
            dense_distance=block.dense_distance,
            quality_score=block.quality_score,
        )

    def candidate(self, *, keep_dense_distance: bool = True) -> Candidate:
        """The candidate this block came from (without its text), for :func:`reference.post_process`."""
        return Candidate(
            doc_id=self.doc_id,
            chunk_index=self.chunk_index,
            original_rank=self.original_rank,
            score=self.score,
            score_label=self.score_label,
            raw_score=self.score,
            dense_distance=self.dense_distance if keep_dense_distance else None,
        )


class ModeOutcome(_Model):
    """One query in one mode: what ``lookup_knowledge`` did and returned.

    ``ranking`` holds the evidence keys of the candidates of the attempt that was used, in retrieval
    order: the ranking the metrics measure and the exported TREC run holds. ``metrics`` are that
    query's ranking measures by their standard names (``R@5``, ``nDCG@10``, ``RR``); empty for a query
    nothing answers.
    """

    path: LookupPath
    retried: bool
    candidates: int
    ranking: tuple[str, ...]
    relevant_ranks: dict[str, int]
    evidence: tuple[EvidenceRow, ...]
    filtered_evidence: tuple[EvidenceRow, ...] | None = None
    top_quality_score: float | None
    filtered_top_quality_score: float | None = None
    is_low_quality: bool
    relevance_level: RelevanceLevel
    metrics: dict[str, float]


class LabelCheck(_Model):
    """Where the best-graded chunks rank in an unfiltered dense search and a BM25-only search."""

    depth: int
    dense_rank: int | None
    bm25_rank: int | None

    @property
    def dense_finds(self) -> bool:
        return self.dense_rank is not None

    @property
    def bm25_finds(self) -> bool:
        return self.bm25_rank is not None

    def as_labelled(self, kind: str) -> bool | None:
        """Paraphrase: dense finds it and BM25 does not; exact token: the reverse; others: None."""
        if kind == "paraphrase":
            return self.dense_finds and not self.bm25_finds
        if kind == "exact_token":
            return self.bm25_finds and not self.dense_finds
        return None


class QueryOutcome(_Model):
    """A labelled query and its outcome per mode."""

    id: str
    query: str
    kind: QueryKind
    category: str | None = None
    relevant: dict[str, int]
    answer_in_category: bool | None = None
    modes: dict[SearchMode, ModeOutcome]
    label_check: LabelCheck | None = None

    @property
    def answerable(self) -> bool:
        return bool(self.relevant)


class SourceInfo(_Model):
    """Where a file came from and its SHA-256, so a recorded report names exactly what it measured."""

    path: str
    sha256: str
    rows: int


class EvalRun(_Model):
    """Everything one evaluation run measured; ``evaluation.json`` holds it under ``run``."""

    format: int = RUN_FORMAT
    created: str
    version: str
    embedder: str
    engine: str
    corpus: SourceInfo
    queries: SourceInfo
    qrels: SourceInfo | None = None
    layout: str = "JSON Lines (corpus and queries files)"
    trec_docids: TrecDocids = "evidence_key"
    categories: tuple[str, ...]
    warnings: tuple[str, ...] = ()  # what is suspicious about the set (evaluation.LabelledSet.warnings)
    settings: dict[str, Any]
    modes: tuple[SearchMode, ...]
    ks: tuple[int, ...]
    label_check_depth: int
    seconds: dict[str, float]
    outcomes: tuple[QueryOutcome, ...]

    def settings_model(self) -> Settings:
        """The settings the run used, as :class:`reference.Settings`."""
        return Settings.from_mapping(self.settings, source="the evaluation run")


def run_evaluation(
    eval_set: EvalSet,
    store: MilvusKnowledgeStore,
    embedder: Embedder,
    *,
    settings: Settings | None = None,
    modes: Sequence[SearchMode] = ("dense", "hybrid"),
    ks: Sequence[int] = DEFAULT_KS,
    label_check_depth: int = DEFAULT_CHECK_DEPTH,
    engine: str = "",
    progress: Callable[[int, int], None] | None = None,
    ingest_progress: Callable[[int, int], None] | None = None,
) -> EvalRun:
    """Ingest ``eval_set`` into the empty ``store`` and run every query in every mode.

    ``ingest_progress(chunks, total)`` is called with 0 before the ingest and after each batch,
    ``progress(done, total)`` with 0 before the first query and after each one. The store's collection
    must be empty: chunks that are not in the labelled corpus would make every metric meaningless.
    """
    settings = settings or store.settings
    modes = tuple(dict.fromkeys(modes))
    if not modes or any(m not in ("dense", "hybrid") for m in modes):
        raise EvaluationError(f"modes are {modes!r}; use dense, hybrid or both")
    ks = tuple(sorted(set(ks)))
    if not ks or any(isinstance(k, bool) or not isinstance(k, int) or k < 1 for k in ks):
        raise EvaluationError(f"cut-offs are {ks!r}; use whole numbers of at least 1, e.g. 1,5,10")
    if embedder.dim != store.dim:
        raise EvaluationError(
            f"the embedder makes {embedder.dim}-dimensional vectors, the store holds {store.dim}"
        )
    already = store.count()
    if already:
        raise EvaluationError(
            f"collection {store.collection!r} already holds {already} chunks; evaluate into an empty "
            "collection so that only the labelled corpus can be retrieved"
        )
    started = time.perf_counter()
    total = len(eval_set.corpus)
    if ingest_progress is not None:
        ingest_progress(0, total)
    store.ingest(
        store_chunks(eval_set),
        embedder=embedder,
        progress=None if ingest_progress is None else lambda done: ingest_progress(done, total),
    )
    ingested = time.perf_counter()
    vectors = embedder.embed([q.query for q in eval_set.queries])
    category_of = {c.evidence_key: c.category for c in eval_set.corpus}
    outcomes = []
    if progress is not None:
        progress(0, len(eval_set.queries))
    for done, (query, vector) in enumerate(zip(eval_set.queries, vectors, strict=True), start=1):
        outcome = _run_query(store, query, vector, settings, modes, label_check_depth)
        if query.category is not None and query.answerable:
            inside = any(category_of[key] == query.category for key in query.relevant)
            outcome = outcome.model_copy(update={"answer_in_category": inside})
        outcomes.append(outcome)
        if progress is not None:
            progress(done, len(eval_set.queries))
    outcomes = _with_metrics(outcomes, modes, measure_names(ks))
    finished = time.perf_counter()
    return EvalRun(
        created=datetime.now(UTC).replace(microsecond=0).isoformat(),
        version=_version(),
        embedder=describe_embedder(embedder),
        engine=engine,
        corpus=_source(eval_set.corpus_source, len(eval_set.corpus)),
        queries=_source(eval_set.queries_source, len(eval_set.queries)),
        qrels=None if eval_set.qrels_source is None else _source(eval_set.qrels_source, _judgments(eval_set)),
        layout=eval_set.layout,
        trec_docids=eval_set.trec_docids,
        categories=eval_set.categories,
        warnings=eval_set.warnings,
        settings=settings.as_dotted(),
        modes=modes,
        ks=ks,
        label_check_depth=label_check_depth,
        seconds={"ingest": round(ingested - started, 3), "queries": round(finished - ingested, 3)},
        outcomes=tuple(outcomes),
    )


def _run_query(
    store: MilvusKnowledgeStore,
    query: EvalQuery,
    vector: Sequence[float],
    settings: Settings,
    modes: Sequence[SearchMode],
    depth: int,
) -> QueryOutcome:
    per_mode = {}
    for mode in modes:
        found = lookup_knowledge(
            store, query.query, vector, settings=settings, category=query.category, mode=mode
        )
        ranking = [c.evidence_key for c in found.candidates]
        first = found.filtered_result
        per_mode[mode] = ModeOutcome(
            path=found.path,
            retried=found.retried,
            candidates=len(ranking),
            ranking=tuple(ranking),
            relevant_ranks={key: ranking.index(key) + 1 for key in query.relevant if key in ranking},
            evidence=tuple(EvidenceRow.of(b) for b in found.result.blocks),
            filtered_evidence=None if first is None else tuple(EvidenceRow.of(b) for b in first.blocks),
            top_quality_score=found.result.top_quality_score,
            filtered_top_quality_score=None if first is None else first.top_quality_score,
            is_low_quality=found.result.is_low_quality,
            relevance_level=found.result.relevance_level,
            metrics={},
        )
    # Only these kinds claim which leg finds them; BM25-only searches are slow on Milvus Lite.
    check = _label_check(store, query, vector, depth) if query.kind in CHECKED_KINDS else None
    return QueryOutcome(
        id=query.id,
        query=query.query,
        kind=query.kind,
        category=query.category,
        relevant=query.relevant,
        modes=per_mode,
        label_check=check,
    )


def _with_metrics(
    outcomes: list[QueryOutcome], modes: Sequence[SearchMode], names: Sequence[str]
) -> list[QueryOutcome]:
    """Each answerable query's ranking measures, computed per mode in one trec_eval pass."""
    qrels = {o.id: o.relevant for o in outcomes if o.answerable}
    scored = {
        mode: per_query(names, {o.id: o.modes[mode].ranking for o in outcomes}, qrels) for mode in modes
    }
    out = []
    for o in outcomes:
        if not o.answerable:
            out.append(o)
            continue
        modes_now = {m: o.modes[m].model_copy(update={"metrics": scored[m][o.id]}) for m in modes}
        out.append(o.model_copy(update={"modes": modes_now}))
    return out


def _label_check(
    store: MilvusKnowledgeStore, query: EvalQuery, vector: Sequence[float], depth: int
) -> LabelCheck:
    best = max(query.relevant.values())
    targets = {key for key, grade in query.relevant.items() if grade == best}
    dense = [c.evidence_key for c in store.search(query.query, vector, mode="dense", k=depth)]
    bm25 = _bm25_ranking(store, query.query, depth)

    def first(ranking: list[str]) -> int | None:
        return next((rank for rank, key in enumerate(ranking, start=1) if key in targets), None)

    return LabelCheck(depth=depth, dense_rank=first(dense), bm25_rank=first(bm25))


def _bm25_ranking(store: MilvusKnowledgeStore, text: str, k: int) -> list[str]:
    """A BM25-only search on the store's collection (a diagnostic; lookups never run one alone)."""
    from pymilvus.exceptions import MilvusException

    try:
        hits = store.client.search(
            store.collection,
            data=[text],
            anns_field=SPARSE_FIELD,
            limit=k,
            search_params={"metric_type": "BM25"},
            output_fields=[DOC_FIELD, INDEX_FIELD],
        )[0]
    except (MilvusException, ConnectionError, OSError) as exc:
        message = getattr(exc, "message", None) or str(exc)
        raise StoreError(f"Milvus could not run the BM25 label-check search: {message}") from exc
    return [f"{hit['entity'][DOC_FIELD]}#{int(hit['entity'][INDEX_FIELD])}" for hit in hits]


def _source(path: str, rows: int) -> SourceInfo:
    digest = hashlib.sha256(Path(path).read_bytes()).hexdigest()
    bundled = bundled_data_dir().resolve()
    try:
        shown = f"bundled: evaluation/data/{Path(path).resolve().relative_to(bundled).as_posix()}"
    except ValueError:
        shown = path
    return SourceInfo(path=shown, sha256=digest, rows=rows)


def _judgments(eval_set: EvalSet) -> int:
    return sum(len(q.relevant) for q in eval_set.queries)


def _version() -> str:
    try:
        return metadata.version("rag-quality-conformance")
    except metadata.PackageNotFoundError:
        return "unknown"


def load_run(path: str | os.PathLike[str]) -> EvalRun:
    """Read the run back from an ``evaluation.json`` written by ``rag-reference evaluate``."""
    import json

    source = str(path)
    try:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
    except OSError as exc:
        raise EvaluationError(f"{source}: cannot open the file: {exc.strerror or exc}") from None
    except json.JSONDecodeError as exc:
        raise EvaluationError(f"{source}:{exc.lineno}: not valid JSON ({exc.msg})") from None
    if not isinstance(data, dict) or "run" not in data:
        raise EvaluationError(
            f"{source}: not an evaluation report (no 'run' object); write one with evaluate"
        )
    if isinstance(data["run"], dict) and data["run"].get("format") != RUN_FORMAT:
        raise EvaluationError(
            f"{source}: run format {data['run'].get('format')!r}, this version reads {RUN_FORMAT}; "
            "evaluate again"
        )
    try:
        return EvalRun.model_validate(data["run"])
    except ValidationError as exc:
        err = exc.errors()[0]
        where = ".".join(str(p) for p in err["loc"])
        raise EvaluationError(f"{source}: run.{where}: {err['msg']}") from None

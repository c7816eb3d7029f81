"""Reference implementation of the ``rag-retrieval-quality-score`` spec.

Pure logic (labels, the single normalizer, the rank-preserving post-processor), a Milvus store with one
engine search per query, ``lookup_knowledge`` with the category low-quality retry, offline embedders,
and the evaluation loop (a labelled query set, ranking metrics, the gates as classifiers, threshold
calibration). pymilvus is imported only when the store talks to Milvus, wordllama only when its
embedder is built, matplotlib only when plots are drawn.

- the spec's steps: ``_labels`` (score labels and their aliases), ``_quality`` (the single normalizer),
  ``_postprocess`` (rank order, dedup, caps, return-n, the gates);
- ``store/``: the Milvus store, dense and hybrid (dense ANN + BM25 Function + RRF);
- ``_lookup``: ``lookup_knowledge``, search then post-process, with the category retry;
- ``evaluation/``: evaluation and calibration on labelled sets (BEIR in, TREC runs out);
- ``_models`` (the values), ``_settings``, ``_errors``, ``_embed`` (the offline embedders);
- ``_cli``: ``rag-reference``.
"""

from ._embed import (
    Embedder,
    EmbedderError,
    EmbedderUnavailableError,
    HashingEmbedder,
    WordLlamaEmbedder,
    describe_embedder,
    make_embedder,
)
from ._errors import (
    EmptyIngestError,
    EngineFeatureError,
    EngineTimeoutError,
    IngestError,
    InvalidCandidateError,
    InvalidEvidenceIdError,
    InvalidLimitError,
    InvalidMaxL2DistanceError,
    InvalidRankError,
    InvalidScoreError,
    InvalidSettingError,
    InvalidThresholdError,
    MilvusUnavailableError,
    RetrievalQualityError,
    StoreError,
    UnknownScoreLabelError,
    VectorDimensionError,
)
from ._labels import CANONICAL_LABELS, LEGACY_ALIASES, canonicalize_label
from ._lookup import LookupResult, lookup_knowledge
from ._models import (
    Candidate,
    CompletenessHint,
    DroppedCandidate,
    EvidenceBlock,
    L0Hints,
    PostProcessResult,
    RelevanceLevel,
)
from ._postprocess import post_process
from ._quality import rank_to_quality, to_quality_score
from ._settings import Settings
from .evaluation import (
    Calibration,
    EvalQuery,
    EvalRun,
    EvalSet,
    EvalSetError,
    EvalSummary,
    EvaluationError,
    PlottingUnavailableError,
    bundled_eval_paths,
    calibrate,
    calibration_markdown,
    evaluation_markdown,
    load_eval_set,
    load_run,
    run_evaluation,
    summarize,
    write_plots,
)
from .store._features import EngineFeatures
from .store._ingest import Chunk, read_jsonl, sample_path
from .store._store import InvalidQueryError, MilvusKnowledgeStore

__all__ = [
    "CANONICAL_LABELS",
    "LEGACY_ALIASES",
    "Calibration",
    "Candidate",
    "Chunk",
    "CompletenessHint",
    "DroppedCandidate",
    "Embedder",
    "EmbedderError",
    "EmbedderUnavailableError",
    "EmptyIngestError",
    "EngineFeatureError",
    "EngineFeatures",
    "EngineTimeoutError",
    "EvalQuery",
    "EvalRun",
    "EvalSet",
    "EvalSetError",
    "EvalSummary",
    "EvaluationError",
    "EvidenceBlock",
    "HashingEmbedder",
    "IngestError",
    "InvalidCandidateError",
    "InvalidEvidenceIdError",
    "InvalidLimitError",
    "InvalidMaxL2DistanceError",
    "InvalidQueryError",
    "InvalidRankError",
    "InvalidScoreError",
    "InvalidSettingError",
    "InvalidThresholdError",
    "L0Hints",
    "LookupResult",
    "MilvusKnowledgeStore",
    "MilvusUnavailableError",
    "PlottingUnavailableError",
    "PostProcessResult",
    "RelevanceLevel",
    "RetrievalQualityError",
    "Settings",
    "StoreError",
    "UnknownScoreLabelError",
    "VectorDimensionError",
    "WordLlamaEmbedder",
    "bundled_eval_paths",
    "calibrate",
    "calibration_markdown",
    "canonicalize_label",
    "describe_embedder",
    "evaluation_markdown",
    "load_eval_set",
    "load_run",
    "lookup_knowledge",
    "make_embedder",
    "post_process",
    "rank_to_quality",
    "read_jsonl",
    "run_evaluation",
    "sample_path",
    "summarize",
    "to_quality_score",
    "write_plots",
]

"""Evaluation of retrieval on labelled sets, shared by the reference and the kit, knowing neither.

What ``ir_measures`` is to both sides, one level up: the reference's ``rag-reference evaluate`` and
``calibrate`` and the kit's ``rag-conformance upgrade`` run on it, so a labelled set, a metric, a run
file or a test is written once. It imports neither ``reference`` nor ``conformance`` (import-linter
checks it). Values, plain functions over them, and two verbs:

- ``sets/``: labelled sets as values (``LabelledSet``, ``LabelledQuery``, ``LabelledChunk``), the one
  validator every set passes, the project's JSON Lines format, the BEIR layout, the bundled set
  (``data/``, described in ``data/README.md``);
- ``_metrics``: ranking measures through ir_measures (trec_eval's implementation), per query, and a
  gate scored as a binary classifier;
- ``_trec``: TREC run and qrels files, one writer and one reader each, ids checked;
- ``_stats``: paired tests over queries, bootstrap intervals, Benjamini-Hochberg (SciPy);
- ``_verbs``: :func:`evaluate` a run, :func:`compare` two runs query by query;
- ``_plots``: PNG drawers (matplotlib, optional, imported only there);
- ``_progress``: the one progress bar (tqdm, on stderr, only on a terminal);
- ``_embed``: the embedder of labelled sets (wordllama, from its wheel, never downloaded);
- ``_errors``: one root, :class:`EvaluationError`;
- ``_extra``: the statistics stack as the ``evaluation`` extra: what is missing, and the one command
  that installs it (:func:`require_statistics`).

Importing it starts nothing and imports neither ir_measures, SciPy, tqdm nor matplotlib.
"""

from ._embed import WordLlamaEmbedder, wordllama_installed
from ._errors import EmbedderUnavailableError, EvaluationError, LabelledSetError, PlottingUnavailableError
from ._extra import (
    EVALUATION_EXTRA,
    STATISTICS_MODULES,
    StatisticsUnavailableError,
    missing_statistics,
    require_statistics,
)
from ._metrics import (
    GAIN_CONVENTION,
    BinaryScores,
    binary_scores,
    measure_names,
    per_query,
    run_scores,
    threshold_grid,
)
from ._plots import (
    PLOT_EXTRA,
    figure,
    plot_differences,
    plot_intervals,
    plot_score_histograms,
    plotting_available,
)
from ._progress import ProgressStep, progress_bar
from ._stats import (
    Alternative,
    PairedTest,
    adjust,
    adjust_p,
    detectable_drop,
    paired_quantile_test,
    paired_test,
    percentile,
)
from ._trec import (
    QRELS_FILE,
    TrecIdError,
    ir_measures_command,
    qrels_lines,
    read_qrels,
    read_run,
    run_lines,
    write_qrels,
    write_run,
    write_trec,
)
from ._verbs import Comparison, Evaluation, compare, evaluate
from .sets import (
    BUNDLED_NAME,
    CHUNKINGS,
    KINDS,
    MAX_GRADE,
    Chunking,
    LabelledChunk,
    LabelledQuery,
    LabelledSet,
    QueryKind,
    TrecDocids,
    bundled_beir_path,
    bundled_data_dir,
    bundled_jsonl_paths,
    check_trec_ids,
    load_beir_set,
    load_jsonl_set,
    read_corpus,
    read_queries,
    slice_set,
    trec_docid,
    validate_set,
    write_beir,
)

__all__ = [
    "BUNDLED_NAME",
    "CHUNKINGS",
    "EVALUATION_EXTRA",
    "GAIN_CONVENTION",
    "KINDS",
    "MAX_GRADE",
    "PLOT_EXTRA",
    "QRELS_FILE",
    "STATISTICS_MODULES",
    "Alternative",
    "BinaryScores",
    "Chunking",
    "Comparison",
    "EmbedderUnavailableError",
    "Evaluation",
    "EvaluationError",
    "LabelledChunk",
    "LabelledQuery",
    "LabelledSet",
    "LabelledSetError",
    "PairedTest",
    "PlottingUnavailableError",
    "ProgressStep",
    "QueryKind",
    "StatisticsUnavailableError",
    "TrecDocids",
    "TrecIdError",
    "WordLlamaEmbedder",
    "adjust",
    "adjust_p",
    "binary_scores",
    "bundled_beir_path",
    "bundled_data_dir",
    "bundled_jsonl_paths",
    "check_trec_ids",
    "compare",
    "detectable_drop",
    "evaluate",
    "figure",
    "ir_measures_command",
    "load_beir_set",
    "load_jsonl_set",
    "measure_names",
    "missing_statistics",
    "paired_quantile_test",
    "paired_test",
    "per_query",
    "percentile",
    "plot_differences",
    "plot_intervals",
    "plot_score_histograms",
    "plotting_available",
    "progress_bar",
    "qrels_lines",
    "read_corpus",
    "read_qrels",
    "read_queries",
    "read_run",
    "require_statistics",
    "run_lines",
    "run_scores",
    "slice_set",
    "threshold_grid",
    "trec_docid",
    "validate_set",
    "wordllama_installed",
    "write_beir",
    "write_qrels",
    "write_run",
    "write_trec",
]

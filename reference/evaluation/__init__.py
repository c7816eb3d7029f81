"""Evaluation of the reference on labelled query sets, and calibration of its quality thresholds.

- the labelled set: a corpus of chunks and queries with graded relevance, validated together, in the
  reference's own JSON Lines format (``_dataset``) or in the BEIR layout (``_beir``, which also writes
  a set in it);
- one run: the corpus ingested into an empty collection, every query through ``lookup_knowledge`` in
  each search mode, the label check, what ``evaluation.json`` holds (``_run``);
- ranking metrics from trec_eval's implementation through ir_measures, and the gates as classifiers
  (``_metrics``); every table of the report computed from a run alone (``_summary``);
- the TREC run and qrels files of a run, for trec_eval, ir_measures and ranx (``_trec``);
- calibration: the top ``qualityScore`` per class, a threshold sweep, suggested settings
  (``_calibration``);
- the reports: Markdown (``_report``) and PNG plots (``_plots``, the only module that imports
  matplotlib);
- ``rag-reference evaluate`` and ``calibrate``, a thin layer over the above (``_cli``), with its
  progress bars, tqdm's (``_progress``, which the benchmarks use too).

:mod:`reference` re-exports the names it always had; the BEIR and TREC functions are public here.
Importing this package starts no engine and imports neither pymilvus, ir_measures nor matplotlib.
"""

from ._beir import bundled_beir_path, load_beir_set, write_beir
from ._calibration import Calibration, calibrate
from ._dataset import EvalQuery, EvalSet, EvalSetError, EvaluationError, bundled_eval_paths, load_eval_set
from ._plots import PlottingUnavailableError, write_plots
from ._report import calibration_markdown, evaluation_markdown
from ._run import EvalRun, load_run, run_evaluation
from ._summary import EvalSummary, summarize
from ._trec import write_trec

__all__ = [
    "Calibration",
    "EvalQuery",
    "EvalRun",
    "EvalSet",
    "EvalSetError",
    "EvalSummary",
    "EvaluationError",
    "PlottingUnavailableError",
    "bundled_beir_path",
    "bundled_eval_paths",
    "calibrate",
    "calibration_markdown",
    "evaluation_markdown",
    "load_beir_set",
    "load_eval_set",
    "load_run",
    "run_evaluation",
    "summarize",
    "write_beir",
    "write_plots",
    "write_trec",
]

"""Evaluation of the reference on labelled query sets, and calibration of its quality thresholds.

- the labelled set: a corpus of chunks and queries with graded relevance, in the reference's own JSON
  Lines format, validated together (``_dataset``);
- one run: the corpus ingested into an empty collection, every query through ``lookup_knowledge`` in
  each search mode, the label check, what ``evaluation.json`` holds (``_run``);
- ranking metrics and the gates as classifiers (``_metrics``), and every table of the report computed
  from a run alone (``_summary``);
- calibration: the top ``qualityScore`` per class, a threshold sweep, suggested settings
  (``_calibration``);
- the reports: Markdown (``_report``) and PNG plots (``_plots``, the only module that imports
  matplotlib);
- ``rag-reference evaluate`` and ``calibrate``, a thin layer over the above (``_cli``), with its
  progress bar (``_progress``).

The public names are re-exported by :mod:`reference`. Importing this package starts no engine and
imports neither pymilvus nor matplotlib.
"""

from ._calibration import Calibration, calibrate
from ._dataset import EvalQuery, EvalSet, EvalSetError, EvaluationError, bundled_eval_paths, load_eval_set
from ._plots import PlottingUnavailableError, write_plots
from ._report import calibration_markdown, evaluation_markdown
from ._run import EvalRun, load_run, run_evaluation
from ._summary import EvalSummary, summarize

__all__ = [
    "Calibration",
    "EvalQuery",
    "EvalRun",
    "EvalSet",
    "EvalSetError",
    "EvalSummary",
    "EvaluationError",
    "PlottingUnavailableError",
    "bundled_eval_paths",
    "calibrate",
    "calibration_markdown",
    "evaluation_markdown",
    "load_eval_set",
    "load_run",
    "run_evaluation",
    "summarize",
    "write_plots",
]

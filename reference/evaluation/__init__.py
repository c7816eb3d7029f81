"""Evaluation of the reference on labelled query sets, and calibration of its quality thresholds.

- the labelled set: read, validated and written by the evaluation package (:mod:`evaluation`, shared
  with the kit's upgrade check), in the JSON Lines format or the BEIR layout; ``_dataset`` raises its
  errors as the reference's and checks the chunks against the store's limits;
- one run: the corpus ingested into an empty collection, every query through ``lookup_knowledge`` in
  each search mode, the label check, what ``evaluation.json`` holds (``_run``);
- every table of the report computed from a run alone (``_summary``), with the evaluation package's
  ranking metrics (trec_eval's, through ir_measures) and gate scores;
- the TREC run and qrels files of a run, through the evaluation package's one writer (``_trec``);
- calibration: the top ``qualityScore`` per class, a threshold sweep, suggested settings
  (``_calibration``);
- the reports: Markdown (``_report``) and PNG plots (``_plots``, on the evaluation package's figures);
- ``rag-reference evaluate`` and ``calibrate``, a thin layer over the above (``_cli``), with the
  evaluation package's progress bars.

:mod:`reference` re-exports the names it always had; the BEIR and TREC functions are public here
(``EvalSet`` and ``EvalQuery`` are the evaluation package's ``LabelledSet`` and ``LabelledQuery``).
Importing this package starts no engine and imports neither pymilvus, ir_measures nor matplotlib.
"""

from ._calibration import Calibration, calibrate
from ._dataset import (
    EvalQuery,
    EvalSet,
    EvalSetError,
    EvaluationError,
    bundled_beir_path,
    bundled_eval_paths,
    load_beir_set,
    load_eval_set,
    write_beir,
)
from ._plots import PlottingUnavailableError, write_plots
from ._report import calibration_markdown, evaluation_markdown
from ._run import EvalRun, load_run, run_evaluation
from ._summary import EvalSummary, summarize
from ._trec import export_trec

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
    "export_trec",
    "load_beir_set",
    "load_eval_set",
    "load_run",
    "run_evaluation",
    "summarize",
    "write_beir",
    "write_plots",
]

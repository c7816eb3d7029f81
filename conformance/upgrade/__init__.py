"""``rag-conformance upgrade``: is moving from one Milvus to another safe? The check's own folder.

The orchestration is here; the evaluation's building blocks (the labelled set, the metrics, the run
files, the paired statistics, the plots, the progress bar, the embedder) are the evaluation package's
(:mod:`evaluation`), shared with ``rag-reference evaluate``:

- ``_in_place``: ``--in-place``, the new engine started on the data the old one wrote (CANNOT OPEN,
  or the collections, rows, indexes and every query's answer compared); its values and comparison
  in ``_in_place_values``;
- ``_check``: the whole check as one call (:func:`run_upgrade`), and the TREC runs it writes;
- ``_labelled``: the labelled set and its vectors, the evaluation package's errors as
  :class:`UpgradeInputError`;
- ``_settings``: the TOML settings, the lookup both engines are asked and the tolerances;
- ``_sides``: the engines (started or reached by address) and one adapter per side, every query asked
  on both (and on a second instance of each, the twins, where they can start twice), interleaved
  where they can run at once; a failed lookup asked once more, then kept as that query's error;
- ``_gate``: the paired comparison (quality one-sided, with the drop the set can detect), the error
  rates, the tolerances and the verdict;
- ``_latency``: p50, p95 and p99 of the new engine against the old, beyond the instance effect;
- ``_report``: ``upgrade.md`` and ``upgrade.html``, and every file written at once, atomically;
- ``_data``: ``upgrade.json`` (per-query values keyed by id, never NaN) and ``latency.csv``;
- ``_plots``: the PNGs, drawn by the evaluation package;
- ``_runs``: the TREC runs and qrels, ids redacted and encoded where a TREC file could not carry them.

- ``_suite``: the suite on both engines and its changes by scenario id (the reports' comparison,
  :mod:`conformance.reporting._diff`); ``_suite_runs``: one engine's whole suite in a child process,
  as ``rag-conformance engines`` runs each column too.

The command line (``conformance/commands/_upgrade.py``) takes the options and prints the verdict.
"""

from ._check import RUNS_DIR, export_runs, run_upgrade
from ._gate import METRICS, UpgradeResult, compare
from ._in_place import IN_PLACE_FILE, check_in_place
from ._in_place_values import SAME_SCORE_WITHIN, InPlaceResult
from ._labelled import UpgradeInputError, load_labelled_set
from ._settings import UpgradeSettings, load_upgrade_settings
from ._sides import MODES, EngineEvaluation, Outcome, engine_label, evaluate_engines, open_engine
from ._suite import SuiteChanges

__all__ = [
    "IN_PLACE_FILE",
    "METRICS",
    "MODES",
    "RUNS_DIR",
    "SAME_SCORE_WITHIN",
    "EngineEvaluation",
    "InPlaceResult",
    "Outcome",
    "SuiteChanges",
    "UpgradeInputError",
    "UpgradeResult",
    "UpgradeSettings",
    "check_in_place",
    "compare",
    "engine_label",
    "evaluate_engines",
    "export_runs",
    "load_labelled_set",
    "load_upgrade_settings",
    "open_engine",
    "run_upgrade",
]

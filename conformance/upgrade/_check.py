"""The whole upgrade check as one call: input first, then the suite, the two sides, the gate, the files.

Bad input (the labelled set, the settings, ``--limit``) raises before any engine starts. Then the
suite on both engines and its comparison (:func:`~._suite.run_suites`), the two sides, the gate and
every file written: all of it this folder's; the command line only prints the result.
"""

from __future__ import annotations

import io
import sys
from pathlib import Path
from typing import IO, Any, cast

import evaluation

from ..boundary._atomic import OutputNotWrittenError, write_all_atomically
from ..boundary._errors import ConformanceError
from ..boundary._redact import register_environment_secrets, register_uri_secrets
from ..engines import parse_engine_address
from ._gate import UpgradeResult, compare
from ._labelled import UpgradeInputError, load_labelled_set
from ._latency import timing_rounds
from ._report import write_reports
from ._runs import RUNS_DIR, run_files
from ._settings import load_upgrade_settings
from ._sides import MODES, EngineEvaluation, Evaluations, calibrates, engine_label, evaluate_engines
from ._suite import SuiteChanges, run_suites

__all__ = ["RUNS_DIR", "export_runs", "run_upgrade"]


class _ThroughBar(io.TextIOBase):
    """A text stream whose lines are printed above a live progress bar (tqdm's ``write``), not over it."""

    def __init__(self, bar: Any, stream: IO[str]) -> None:
        self._bar, self._stream, self._pending = bar, stream, ""

    def writable(self) -> bool:
        return True

    def write(self, text: str) -> int:
        *lines, self._pending = (self._pending + text).split("\n")
        for line in lines:
            self._bar.write(line, file=self._stream)
        return len(text)

    def flush(self) -> None:
        self._stream.flush()


def _through(bar: Any, stream: IO[str]) -> IO[str]:
    """``stream``, or, while ``bar`` is drawn, a stream that prints above it."""
    return stream if bar.disable else cast(IO[str], _ThroughBar(bar, stream))


def export_runs(
    labelled: evaluation.LabelledSet, evaluations: dict[str, EngineEvaluation], out: Path
) -> list[Path]:
    """``runs/``: the qrels and a TREC run per side and mode (:func:`run_files`), written atomically."""
    files: dict[str | Path, str | bytes] = {out / n: t for n, t in run_files(labelled, evaluations).items()}
    try:
        (out / RUNS_DIR).mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise OutputNotWrittenError(out / RUNS_DIR, exc.errno, exc.strerror or str(exc)) from exc
    return write_all_atomically(files)


def run_upgrade(
    old: str,
    new: str,
    *,
    adapter: str = "reference",
    beir: str | None = None,
    split: str = "test",
    limit: int | None = None,
    settings: str | None = None,
    out: str | Path = "rqs-upgrade",
    suite: bool = True,
    select: str | None = None,
    seed: int = 0,
    progress: bool = True,
    plots: bool = True,
    output: IO[str] | None = None,
) -> tuple[UpgradeResult, list[Path]]:
    """Run the whole check; return the result and the files written.

    ``suite`` false: the suites are not run nor compared (``--no-suite``); ``select`` (a pytest ``-k``
    expression) runs only the scenarios it matches on both engines."""
    stream = output or sys.stderr
    root = Path(out)
    for address in (old, new):
        register_uri_secrets(address)  # the password of a uri: engine is hidden in every page we write
        parse_engine_address(address)  # a name no command takes is bad input: stop before any engine
    register_environment_secrets()  # MILVUS_TOKEN, MILVUS_URI's password
    if limit is not None and limit < 1:
        raise UpgradeInputError(f"--limit is {limit}; give at least 1 query, or leave it out for all")
    config = load_upgrade_settings(settings)
    labelled = load_labelled_set(beir, split=split, limit=limit)
    changes = SuiteChanges(compared=False, why_not="skipped (--no-suite)")
    if suite:
        with evaluation.progress_bar("upgrade: suite", 2, enabled=progress, unit="engine") as bar:
            changes = run_suites(
                old,
                new,
                adapter=adapter,
                out=root,
                select=select,
                stream=_through(bar, stream),
                done=lambda: bar.update(1),
            )
    sides = 4 if calibrates(old, new) else 2  # the twins: a second instance of each engine
    total = len(labelled.queries) * len(MODES) * sides * timing_rounds(len(labelled.queries))
    with evaluation.progress_bar("upgrade: lookups", total, enabled=progress, unit="lookup") as bar:

        def advance(mode: str, count: int) -> None:
            bar.set_postfix_str(mode, refresh=False)
            bar.update(count)

        try:
            sides_run = evaluate_engines(
                adapter,
                old,
                new,
                labelled,
                config.rag,
                seed=seed,
                progress=advance,
                output=_through(bar, stream),
            )
        except ConformanceError as exc:
            # Either engine may be the one that failed; the message names it. Nothing was evaluated.
            first, second = EngineEvaluation(old, failed=str(exc)), EngineEvaluation(new)
            first.not_run = dict.fromkeys(MODES, "the evaluation could not run")
            second.not_run = dict(first.not_run)
            sides_run = Evaluations(first, second, False)
    first, second = sides_run.old, sides_run.new
    result = compare(
        labelled,
        first,
        second,
        changes,
        config,
        adapter=adapter,
        interleaved=sides_run.interleaved,
        twins=sides_run.twins,
        old_label=engine_label(old),
        new_label=engine_label(new),
        seed=seed,
    )
    runs = run_files(labelled, {"old": first, "new": second})
    return result, write_reports(result, root, plots=plots, runs=runs)

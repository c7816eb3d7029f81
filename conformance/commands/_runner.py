"""``run_conformance``: the library API behind ``rag-conformance run``; a thin layer over pytest."""

from __future__ import annotations

import os
from collections.abc import Sequence

import pytest

from ..boundary._atomic import OutputNotWrittenError
from ..boundary._errors import ConformanceError
from ..boundary._signals import received
from ..options import RunOptions
from ..reporting import Report
from ..reporting._outcomes import OutcomeCollector
from ..scenarios._suite import SUITE_DIR

__all__ = [
    "EXIT_CONFORMS",
    "EXIT_DOES_NOT_CONFORM",
    "EXIT_INTERRUPTED",
    "EXIT_NOT_JUDGED",
    "RunOutcome",
    "run_conformance",
    "run_options",
]

EXIT_CONFORMS = 0
EXIT_DOES_NOT_CONFORM = 1
EXIT_NOT_JUDGED = 2
EXIT_INTERRUPTED = 130  # 128 + SIGINT; a SIGTERM gives 143 (128 + 15), as a shell reports a killed job


class RunOutcome:
    """What a run produced: pytest's exit code, the report (None if pytest never got to scenarios)."""

    def __init__(
        self, exit_code: int, report: Report | None, output_error: OutputNotWrittenError | None = None
    ) -> None:
        self.pytest_exit_code = exit_code
        self.report = report
        self.output_error = output_error  # report.json / junit.xml could not be written: NOT JUDGED

    @property
    def exit_code(self) -> int:
        """0: every applicable scenario passed. 1: one failed, or errored on the implementation's reply
        or crash. 2: the run could not judge (adapter not loadable, handshake or engine failed, engine
        lost midway, usage error, no scenario ran). 130 (SIGINT) or 143 (SIGTERM): interrupted, verdict
        INTERRUPTED, nothing judged. A report that could not be written is 2 whatever it said."""
        if self.report is not None and self.report.interruption is not None:
            return self.report.interruption.exit_code
        if self.pytest_exit_code == pytest.ExitCode.INTERRUPTED:
            # Stopped before the run's own handling (collecting, say): 128 + the signal that came.
            signum = received()
            return EXIT_INTERRUPTED if signum is None else 128 + signum
        if self.output_error is not None:
            return EXIT_NOT_JUDGED
        if self.report is None or self.report.verdict == "NOT JUDGED":
            return EXIT_NOT_JUDGED
        s = self.report.summary
        return EXIT_DOES_NOT_CONFORM if (s.failed or s.errored) else EXIT_CONFORMS


class _Capture:
    """Keeps the session's outcomes, whose report is complete once ``pytest.main`` returns."""

    def __init__(self) -> None:
        self.outcomes: OutcomeCollector | None = None

    def pytest_sessionstart(self, session: pytest.Session) -> None:
        self.outcomes = session.config.stash.get(OutcomeCollector.key, None)

    @property
    def report(self) -> Report | None:
        return self.outcomes.report if self.outcomes is not None else None

    @property
    def output_error(self) -> OutputNotWrittenError | None:
        return self.outcomes.output_error if self.outcomes is not None else None


def run_conformance(
    adapter: str = "reference",
    *,
    milvus: str = "lite",
    report_dir: str | os.PathLike[str] | None = None,
    select: str | None = None,
    pytest_args: Sequence[str] = (),
    adapter_timeout: float | None = None,
    validate: bool = False,
    checks: str = "implementation",
    seed: int | None = None,
    profile: str | None = None,
    strict_stdout: bool = False,
    verbose: int = 0,
    tb: str | None = None,
) -> RunOutcome:
    """Run every scenario of the kit against ``adapter`` and return the outcome.

    ``adapter`` is ``reference``, an entry-point name or ``module:attr``; ``milvus`` is any engine
    name of ``conformance.engines``' one vocabulary (``lite``, ``lite-2.5.1``, ``milvus-2.3.5``,
    ``uri:<uri>``, ``container[:image]``...); ``select`` is a pytest ``-k`` expression.
    ``adapter`` may also be ``cmd:<command line>``, a program speaking the stdio protocol; then
    ``adapter_timeout`` bounds each call (seconds) and ``validate`` checks every message strictly.
    ``checks`` is ``implementation`` (the spec's scenarios), ``engine`` (Milvus behaviour) or ``all``.
    ``seed`` and ``profile`` (``ci`` or ``thorough``) set the property scenarios' seed and examples;
    ``strict_stdout`` makes a stdio program's stdout noise an error.

    The terminal shows progress, the per-requirement table and one line per failed scenario;
    ``verbose`` (pytest's ``-v``, repeatable) or ``tb`` (a pytest ``--tb`` style) add tracebacks.
    The keywords are :class:`~conformance.reporting.RunOptions`' fields; :func:`run_options` takes the
    value itself.
    """
    fields = {
        "adapter": adapter,
        "milvus": milvus,
        "report": None if report_dir is None else os.fspath(report_dir),
        "checks": checks,
        "seed": seed,
        "profile": profile,
        "validate_wire": validate,
        "strict_stdout": strict_stdout,
    }
    if adapter_timeout is not None:
        fields["adapter_timeout"] = adapter_timeout
    options = RunOptions.model_validate(fields)
    return run_options(options, select=select, pytest_args=pytest_args, verbose=verbose, tb=tb)


def run_options(
    options: RunOptions,
    *,
    select: str | None = None,
    pytest_args: Sequence[str] = (),
    verbose: int = 0,
    tb: str | None = None,
) -> RunOutcome:
    """Run the kit's suite with ``options`` (the value ``rag-conformance run`` builds from its command
    line); ``select``, ``pytest_args``, ``verbose`` and ``tb`` are pytest's own."""
    if not SUITE_DIR.is_dir():
        raise ConformanceError(
            f"the kit's suite is missing at {SUITE_DIR}; reinstall rag-quality-conformance"
        )
    args = [
        str(SUITE_DIR),
        "-c",
        str(SUITE_DIR / "pytest.ini"),
        "--rootdir",
        str(SUITE_DIR),
        "-p",
        "no:cacheprovider",
        # pytest's unraisable-exception plugin runs full garbage collections as the session ends, to
        # turn exceptions raised in destructors into warnings: a third of a second per run, for warnings
        # a quiet run never shows. Without it Python prints such an exception to stderr, as it does
        # outside pytest.
        "-p",
        "no:unraisableexception",
        "--no-header",
    ]
    if verbose:
        args += ["-" + "v" * verbose, f"--tb={tb or 'short'}"]
    else:
        # Quiet: the table says what broke, one line per scenario; pytest's own summary lines and
        # tracebacks would repeat it, longer, above it. -qq also drops pytest's closing line, which
        # counts test items (each outline example one), not the table's scenarios.
        args += ["-qq", f"--tb={tb or 'no'}", "-rN", "--disable-warnings"]
    if os.environ.get("PYTEST_DISABLE_PLUGIN_AUTOLOAD"):
        args += ["-p", "conformance.plugin", "-p", "pytest_bdd.plugin"]
    # Naming the adapter selects the kit's scenarios: the reference too, when no other is named.
    if not options.judging:
        options = options.model_copy(update={"adapter": "reference"})
    args += options.pytest_args()
    if select:
        args += ["-k", select]
    args += list(pytest_args)
    capture = _Capture()
    code = pytest.main(args, plugins=[capture])
    return RunOutcome(int(code), capture.report, capture.output_error)

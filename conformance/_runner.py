"""``run_conformance``: the library API behind ``rag-conformance run``; a thin layer over pytest."""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path

import pytest

from ._errors import ConformanceError
from ._recorder import Recorder
from ._report import Report

__all__ = ["RunOutcome", "run_conformance"]

SUITE_DIR = Path(__file__).resolve().parent / "_suite"


class RunOutcome:
    """What a run produced: pytest's exit code, the report (None if pytest never got to scenarios)."""

    def __init__(self, exit_code: int, report: Report | None) -> None:
        self.pytest_exit_code = exit_code
        self.report = report

    @property
    def exit_code(self) -> int:
        """0 only when every applicable scenario passed; 1 when one failed or errored; 2 when no report."""
        if self.report is None:
            return 2 if self.pytest_exit_code in (0, 1, 5) else int(self.pytest_exit_code)
        s = self.report.summary
        return 1 if (s.failed or s.errored) else 0


class _Capture:
    def __init__(self) -> None:
        self.report: Report | None = None

    @pytest.hookimpl(trylast=True)
    def pytest_sessionfinish(self, session: pytest.Session) -> None:
        recorder = session.config.stash.get(Recorder.key, None)
        self.report = recorder.report if recorder else None


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
) -> RunOutcome:
    """Run every scenario of the kit against ``adapter`` and return the outcome.

    ``adapter`` is ``reference``, an entry-point name or ``module:attr``; ``milvus`` is ``lite``,
    ``uri:<uri>`` or ``container[:image]``; ``select`` is a pytest ``-k`` expression.
    ``adapter`` may also be ``cmd:<command line>``, a program speaking the stdio protocol; then
    ``adapter_timeout`` bounds each call (seconds) and ``validate`` checks every message strictly.
    ``checks`` is ``implementation`` (the spec's scenarios), ``engine`` (Milvus behaviour) or ``all``.
    """
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
        "--rqs-adapter",
        adapter,
        "--rqs-milvus",
        milvus,
        "--tb=short",
        "--no-header",
        "-q",
    ]
    if os.environ.get("PYTEST_DISABLE_PLUGIN_AUTOLOAD"):
        args += ["-p", "conformance.plugin", "-p", "pytest_bdd.plugin"]
    if report_dir is not None:
        args += ["--rqs-report", str(report_dir)]
    args += ["--rqs-checks", checks]
    if select:
        args += ["-k", select]
    if adapter_timeout is not None:
        args += ["--rqs-adapter-timeout", str(adapter_timeout)]
    if validate:
        args.append("--rqs-validate")
    args += list(pytest_args)
    capture = _Capture()
    code = pytest.main(args, plugins=[capture])
    return RunOutcome(int(code), capture.report)

"""One engine's whole suite, in a child process of its own: a column of ``rag-conformance engines``'
matrix, and each side of ``rag-conformance upgrade``'s suite comparison (:mod:`._suite`).

Each run is every scenario (``checks="all"``) against one adapter, in a child process (the kit's own
``python -m conformance.commands._engines``), so that one engine's crash or hang cannot take the
others down and no pytest state leaks between runs. A local engine line is started here for the run
and stopped after it; its report is ``<directory>/report.json``, its output ``<directory>/run.log``.
"""

from __future__ import annotations

import re
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import IO

from ..boundary._errors import ConformanceError
from ..boundary._redact import redact_uri
from ..engines._address import engine_label, parse_engine_address
from ..engines._local import LOCAL_ENGINES, LocalServer, ensure_venv
from ..engines._start import start_engine
from ..reporting import Report

__all__ = ["RUN_TIMEOUT_SECONDS", "EngineColumn", "engine_slug", "run_column"]

RUN_TIMEOUT_SECONDS = 1800.0
_SLUG = re.compile(r"[^A-Za-z0-9._-]+")


@dataclass
class EngineColumn:
    """One engine of the matrix: how it was reached, and its report or why there is none."""

    engine: str  # as given, e.g. "lite-2.5.1" or "uri:http://host:19530" (may carry credentials)
    milvus: str | None = None  # the --milvus value the run used
    version: str | None = None
    report: Report | None = None
    report_path: Path | None = None
    not_run: str | None = None  # why there is no report
    seconds: float = 0.0


def engine_slug(engine: str) -> str:
    """The engine's name as a directory name, never with credentials."""
    # Report dirs are named after the engine; URIs may carry credentials, which must not become a path:
    # the name is the redacted address's host, port and path, its user info and query (?token=) dropped.
    if engine.startswith("uri:"):
        where = re.split(r"[?#]", redact_uri(engine[4:]), maxsplit=1)[0]
        return "uri-" + _SLUG.sub("_", where.split("://")[-1].rpartition("@")[2]).strip("_")
    return _SLUG.sub("_", engine).strip("_")


def run_column(
    engine: str, directory: Path, *, adapter: str, out: IO[str], select: str | None = None
) -> EngineColumn:
    """Run every scenario (those ``select`` matches) on ``engine``; the column says how it went.

    Printed to ``out``: a line when it starts and one with its verdict (or why it did not run).
    """
    started = time.monotonic()
    column = EngineColumn(engine)
    print(f"[{engine_label(engine)}] starting", file=out, flush=True)
    try:
        _run_engine(column, directory, adapter, out, select)
    except ConformanceError as exc:
        column.not_run = str(exc)
    except KeyboardInterrupt:
        column.not_run = "interrupted"
        raise
    finally:
        column.seconds = round(time.monotonic() - started, 1)
    verdict = column.report.verdict if column.report else f"NOT RUN: {column.not_run}"
    print(f"[{engine_label(engine)}] {verdict} ({column.seconds:g} s)", file=out, flush=True)
    return column


def _run_engine(
    column: EngineColumn, directory: Path, adapter: str, out: IO[str], select: str | None = None
) -> None:
    backend = parse_engine_address(column.engine)  # a typo is "not run: <why>", not a column of errors
    if backend.kind != "local":
        if backend.kind == "uri":
            # An unreachable server would error every scenario; say once, in the column, why instead.
            with start_engine(column.engine, startup_timeout=10.0) as engine:
                column.version = engine.server_version()
        column.milvus = column.engine
        _run_suite(column, directory, adapter, select)
        return
    local = LOCAL_ENGINES[str(backend.target)]
    venv = ensure_venv(local, output=None)  # pip's progress goes to the terminal
    server = LocalServer(local, venv)
    try:
        column.version = server.wait_ready()
        print(f"[{column.engine}] {local.about}: {column.version} on {server.uri}", file=out, flush=True)
        column.milvus = f"uri:{server.uri}"
        _run_suite(column, directory, adapter, select)
    finally:
        server.stop()


def _run_suite(column: EngineColumn, directory: Path, adapter: str, select: str | None = None) -> None:
    directory.mkdir(parents=True, exist_ok=True)
    report_path = directory / "report.json"
    report_path.unlink(missing_ok=True)  # never read a previous run's report as this one's
    log_path = directory / "run.log"
    command = [sys.executable, "-m", "conformance.commands._engines", "--adapter", adapter]
    command += ["--milvus", str(column.milvus), "--report", str(directory)]
    command += ["-k", select] if select else []
    with log_path.open("wb") as log:
        try:
            code = subprocess.call(command, stdout=log, stderr=subprocess.STDOUT, timeout=RUN_TIMEOUT_SECONDS)
        except subprocess.TimeoutExpired:
            raise ConformanceError(
                f"the run did not finish within {RUN_TIMEOUT_SECONDS:g} s; see {log_path}"
            ) from None
    if not report_path.is_file():
        tail = "\n".join(log_path.read_text(errors="replace").splitlines()[-12:])
        raise ConformanceError(
            f"the run produced no report (exit code {code}); {log_path} ends with:\n{tail}"
        )
    column.report = Report.model_validate_json(report_path.read_text())
    column.report_path = report_path
    milvus = column.report.environment.milvus or {}
    column.version = str(milvus.get("version") or column.version or "?")

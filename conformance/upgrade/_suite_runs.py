"""One engine's whole suite, in a child process of its own: a column of ``rag-conformance engines``'
matrix, and each side of ``rag-conformance upgrade``'s suite comparison (:mod:`._suite`).

Each run is every scenario (``checks="all"``) against one adapter, in a child process (the kit's own
``python -m conformance.commands._engines``), so that one engine's crash or hang cannot take the
others down and no pytest state leaks between runs. A local engine line is started here for the run
and stopped after it; its report is ``<directory>/report.json``, its output ``<directory>/run.log``.
"""

from __future__ import annotations

import contextlib
import os
import re
import signal
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import IO

from ..boundary._credentials import ENGINE_ADDRESS_ENV
from ..boundary._errors import ConformanceError
from ..boundary._redact import redact_uri
from ..boundary._signals import signal_of
from ..engines._address import engine_label, parse_engine_address
from ..engines._load import stretched
from ..engines._local import LOCAL_ENGINES, LocalServer, ensure_venv
from ..engines._start import start_engine
from ..reporting import Report

__all__ = ["RUN_TIMEOUT_SECONDS", "EngineColumn", "engine_slug", "run_column"]

RUN_TIMEOUT_SECONDS = 1800.0
# A run told to stop writes its report and drops its collections in a second or two (a few on an engine
# that stopped answering: it is given up on after a short probe).
CHILD_STOP_SECONDS = 10.0
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
    except KeyboardInterrupt as exc:
        column.not_run = f"interrupted ({signal.Signals(signal_of(exc)).name})"
        column.seconds = round(time.monotonic() - started, 1)
        _keep_interrupted_report(column, directory)
        exc.column = column  # type: ignore[attr-defined]  # the caller keeps it in the matrix so far
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
    command += ["--report", str(directory)]
    command += ["-k", select] if select else []
    # The address may carry a password: the child reads it from its environment (readable by this user
    # only), never from argv (every local user's `ps` shows argv).
    env = {**os.environ, ENGINE_ADDRESS_ENV: str(column.milvus)}
    with log_path.open("wb") as log:
        child = subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT, env=env)
        try:
            code = child.wait(timeout=RUN_TIMEOUT_SECONDS)
        except subprocess.TimeoutExpired:
            _stop_child(child, signal.SIGTERM)
            raise ConformanceError(
                f"the run did not finish within {RUN_TIMEOUT_SECONDS:g} s; see {log_path}"
            ) from None
        except KeyboardInterrupt as exc:
            # The child's run stops as it would itself: its report written (INTERRUPTED), its collections
            # dropped or, on an engine that stopped answering, left for `clean`. Never SIGKILL first.
            _stop_child(child, signal_of(exc))
            raise
    if not report_path.is_file():
        tail = "\n".join(log_path.read_text(errors="replace").splitlines()[-12:])
        raise ConformanceError(
            f"the run produced no report (exit code {code}); {log_path} ends with:\n{tail}"
        )
    column.report = Report.model_validate_json(report_path.read_text())
    column.report_path = report_path
    milvus = column.report.environment.milvus or {}
    column.version = str(milvus.get("version") or column.version or "?")


def _keep_interrupted_report(column: EngineColumn, directory: Path) -> None:
    """The interrupted run's own report (verdict INTERRUPTED), when its child wrote one."""
    path = directory / "report.json"
    with contextlib.suppress(OSError, ValueError):
        column.report = Report.model_validate_json(path.read_text())
        column.report_path = path


def _stop_child(child: subprocess.Popen[bytes], signum: int) -> None:
    """Pass ``signum`` on to a run's child and give it :data:`CHILD_STOP_SECONDS` (stretched with the
    load) to write its report and drop its collections; kill it only if it does not."""
    if child.poll() is not None:
        return
    with contextlib.suppress(ProcessLookupError):
        child.send_signal(signum)
    try:
        child.wait(stretched(CHILD_STOP_SECONDS))
    except subprocess.TimeoutExpired:
        child.kill()
        child.wait()

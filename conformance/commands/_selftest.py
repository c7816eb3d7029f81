"""``rag-conformance selftest``: run the kit against its miniatures and check the mutation matrix.

A miniature is a tiny implementation. A *broken* one violates one requirement of the spec: the kit must
fail it, every failure must name that requirement (the judge checks every reply against the whole spec,
so a fault is caught wherever it shows, but always under the rule it breaks), and no scenario may ERROR
on it (a one-fault implementation must be judged, not crash the kit). A *conforming* one differs from
the reference only where the spec allows: the kit must pass it everywhere. The mutation score is the
share of broken miniatures the kit catches under their named requirement.

A *noted* one breaks only something the spec's words do not forbid (the protocol's shapes): the kit
must pass it everywhere and note the rule it breaks. A conforming one may name the advice it must get.

The matrix is data (TOML)::

    [miniatures.UncanonicalAlias]
    module = "broken"            # tests.miniatures.broken:UncanonicalAlias
    kind = "broken"              # or "conforming", or "noted" (then violates and caught_by are empty)
    violates = ["score-labels"]  # requirement ids; every failure must name one of these
    caught_by = ["legacy-aliases-canonicalize", ...]   # scenarios that must be among those failing it

    [miniatures.OwnDropCodes]
    module = "spec_freedoms"
    kind = "conforming"
    freedoms = ["dropped"]       # rules whose nearest freedom it takes (documentation, checked to exist)
    notes = ["dropped"]          # noted: rules the report must note (conforming: none)
    advice = ["hybrid-rank-constant"]   # advice the report must give

Miniatures live in the source checkout (``tests/miniatures``), not in the installed wheel.
"""

from __future__ import annotations

import contextlib
import importlib
import io
import multiprocessing
import os
import random
import signal
import sys
import tempfile
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait
from pathlib import Path

from ..boundary._signals import SIGNAL_SLICE_SECONDS
from ..engines._load import usable_cores
from ..reporting import Report, broken_requirements
from ._matrix import (
    MatrixRow,
    MiniatureResult,
    SelftestResult,
    format_selftest_matrix,
    load_matrix,
    miniature_verdict,
)

__all__ = ["default_jobs", "run_selftest", "selftest_main"]

DEFAULT_MINIATURES = "tests.miniatures"
MATRIX_NAME = "matrix.toml"


MAX_DEFAULT_JOBS = 8
"""The most miniatures run at once unless ``--jobs`` says more. They share one engine, and Milvus Lite 3
serves from one Python process: a run spends about 0.4 of its 3.2 CPU seconds there, so about eight runs
keep it busy, and more only wait on it (each holding a process of its own)."""


def default_jobs() -> int:
    """How many miniatures run at once by default: one per usable core, at most :data:`MAX_DEFAULT_JOBS`.
    A run keeps its process busy about three quarters of its time (the rest waits on the engine); on two
    cores, beside the test suite's other workers, two runs at a time took 293 s, three 313 s and four
    346 s."""
    return min(usable_cores(), MAX_DEFAULT_JOBS)


def run_selftest(
    expectations: Sequence[MatrixRow],
    *,
    package: str = DEFAULT_MINIATURES,
    milvus: str = "lite",
    seed: int | None = None,
    profile: str = "selftest",
    jobs: int = 1,
    progress: Callable[[MiniatureResult], None] | None = None,
) -> SelftestResult:
    """Run the whole kit once per miniature, on ONE shared engine and with ONE seed.

    Every scenario runs for every miniature (no selection), so "every other scenario passes" is checked
    as stated. ``milvus`` is started once here (``lite``) or reached (``uri:...``), then handed to each
    run as a URI; each run still gets its own collection prefix. ``jobs`` > 1 runs miniatures in that
    many worker processes. ``profile`` "selftest" is ci's example count without shrinking.
    """
    from ..engines import start_engine

    seed = random.getrandbits(32) if seed is None else seed
    started = time.perf_counter()
    results: dict[str, MiniatureResult] = {}
    with start_engine(milvus) as engine, tempfile.TemporaryDirectory(prefix="rqs-selftest-") as tmp:
        shared = f"uri:{engine.endpoint.uri}"
        tasks = [(e, package, shared, seed, profile, str(Path(tmp) / e.name)) for e in expectations]
        if jobs <= 1:
            done: Iterable[MiniatureResult] = (_run_one(*task) for task in tasks)
        else:
            # Separate processes, not threads: pytest sessions are not thread-safe. "spawn" because the
            # parent holds a gRPC client, which must not be forked.
            pool = ProcessPoolExecutor(max_workers=jobs, mp_context=multiprocessing.get_context("spawn"))
            futures = [pool.submit(_run_one, *task) for task in tasks]
            done = _as_they_finish(futures)
        try:
            for result in done:
                # A signal pytest swallowed (it landed outside the kit's own guard: in collection, in
                # a teardown) ends the miniature's session without an interruption in its report.
                signum = result.interrupted or _SIGNALLED.get("signum")
                if signum is not None:
                    # Never a passing miniature: its run was cut off, so the selftest stops, saying why.
                    stop = KeyboardInterrupt(signal.Signals(signum).name)
                    stop.signum = signum  # type: ignore[attr-defined]
                    raise stop
                results[result.expectation.name] = result
                if progress is not None:
                    progress(result)
        except KeyboardInterrupt as exc:
            if jobs > 1:
                _pass_on(int(getattr(exc, "signum", signal.SIGINT)))
            raise
        finally:
            if jobs > 1:
                pool.shutdown(cancel_futures=True)
    ordered = [results[e.name] for e in expectations]
    ids: dict[str, None] = {}
    for result in ordered:
        ids.update(dict.fromkeys(result.statuses))
    return SelftestResult(ordered, seed, time.perf_counter() - started, list(ids))


def _as_they_finish(futures: Sequence[Future[MiniatureResult]]) -> Iterator[MiniatureResult]:
    """Each result as its run ends, waited for in slices (``SIGNAL_SLICE_SECONDS``): a stop signal the
    kernel hands to the pool's own thread must still reach this one at once."""
    pending = set(futures)
    while pending:
        finished, pending = wait(pending, timeout=SIGNAL_SLICE_SECONDS, return_when=FIRST_COMPLETED)
        yield from (future.result() for future in finished)


def _run_one(
    expectation: MatrixRow, package: str, milvus: str, seed: int, profile: str, report_dir: str
) -> MiniatureResult:
    """One full kit run against one miniature, its pytest output kept for when something goes wrong."""
    from ._runner import run_conformance

    t0 = time.perf_counter()
    buffer = io.StringIO()
    with contextlib.redirect_stdout(buffer):
        outcome = run_conformance(
            expectation.adapter(package),
            milvus=milvus,
            report_dir=report_dir,
            pytest_args=["--rqs-seed", str(seed), "--rqs-profile", profile],
        )
    report = outcome.report
    return MiniatureResult(
        expectation=expectation,
        statuses={s.id: s.status for s in report.scenarios} if report else {},
        requirements={s.id: s.requirement_id for s in report.scenarios} if report else {},
        broken={s.id: broken_requirements(s) for s in report.scenarios} if report else {},
        noted=frozenset(_noted_rules(report)) if report else frozenset(),
        advised=frozenset(a.partition(":")[0] for a in report.advice) if report else frozenset(),
        seconds=time.perf_counter() - t0,
        output=buffer.getvalue(),
        error=_not_judged(report, outcome.pytest_exit_code),
        interrupted=report.interruption.exit_code - 128 if report and report.interruption else None,
    )


def _not_judged(report: Report | None, exit_code: int) -> str | None:
    """Why the run says nothing about the miniature (no report, or one the kit could not judge)."""
    if report is None:
        return f"no report (pytest exit code {exit_code})"
    if report.verdict == "NOT JUDGED":
        return f"NOT JUDGED: {report.reason or 'the run could not judge'}"
    if report.interruption is not None:
        return f"INTERRUPTED: {report.reason or report.interruption.signal}"
    return None


def _noted_rules(report: Report) -> set[str]:
    """The rule ids the report's scenario notes name (``note [rule-id] ...``)."""
    found = set()
    for scenario in report.scenarios:
        for note in scenario.notes:
            if note.startswith("note [") and "]" in note:
                found.add(note[len("note [") : note.index("]")])
    return found


def selftest_main(
    *,
    miniatures: str,
    matrix: str | None,
    milvus: str,
    seed: int | None,
    profile: str,
    jobs: int | None = None,
) -> int:
    """The CLI: 0 when the matrix holds, 1 when a miniature escaped or a conforming one failed, 2 on setup."""
    # A console script does not put the working directory on sys.path; a checkout's root must be there
    # for "tests.miniatures" to import (spawned workers inherit the path).
    if os.getcwd() not in sys.path:
        sys.path.insert(0, os.getcwd())
    try:
        importlib.import_module(miniatures)
    except ImportError as exc:
        print(
            f"rag-conformance selftest: cannot import the miniatures package {miniatures!r} ({exc}). "
            "Miniatures live in the source checkout, not the installed kit: run from the repository root "
            "(so that 'tests.miniatures' imports), or pass --miniatures <package> --matrix <matrix.toml>",
            file=sys.stderr,
        )
        return 2
    path = Path(matrix) if matrix else _default_matrix(miniatures)
    if path is None or not path.is_file():
        print(
            f"rag-conformance selftest: no matrix file at {path}; pass --matrix <path to matrix.toml>",
            file=sys.stderr,
        )
        return 2
    expectations = load_matrix(path)

    def report(r: MiniatureResult) -> None:
        print(f"  {r.expectation.name:<36} {miniature_verdict(r):<22} {r.seconds:5.1f} s", flush=True)

    print(f"selftest: {len(expectations)} miniatures from {miniatures}, matrix {path}")
    # SIGTERM (a cancelled CI job) stops the selftest as Ctrl-C does, and says which signal it was.
    _SIGNALLED.clear()
    previous = signal.signal(signal.SIGTERM, _raise_interrupt)
    try:
        outcome = run_selftest(
            expectations,
            package=miniatures,
            milvus=milvus,
            seed=seed,
            profile=profile,
            jobs=default_jobs() if jobs is None else jobs,
            progress=report,
        )
    except KeyboardInterrupt as exc:
        signum = int(getattr(exc, "signum", signal.SIGINT))
        print(
            f"rag-conformance selftest: interrupted by {signal.Signals(signum).name}; a miniature still "
            "running is not counted, nothing was judged as a whole. Exit code " + str(128 + signum),
            file=sys.stderr,
        )
        exit_within(EXIT_GRACE_SECONDS, 128 + signum)
        return 128 + signum
    finally:
        signal.signal(signal.SIGTERM, previous)
    print()
    print(format_selftest_matrix(outcome))
    return 0 if outcome.ok else 1


EXIT_GRACE_SECONDS = 20.0
"""How long an interrupted selftest may take to exit once it has said so. Interpreter exit joins every
worker thread the miniatures' runs left; a recording proxy's, blocked on its engine, once hung a
sequential selftest for good (issue 45, case 4). The proxy now ends its threads even when a signal cuts
its stop short; this bound is the backstop for any other thread that will not end."""


def exit_within(seconds: float, code: int) -> None:
    """End the process with ``code`` if it has not ended ``seconds`` from now (a daemon timer: it
    outlives the main thread's return and fires during a hung interpreter exit)."""
    import threading

    def force() -> None:
        with contextlib.suppress(Exception):
            print(
                f"rag-conformance selftest: still stopping after {seconds:g} s; exiting now ({code})",
                file=sys.stderr,
                flush=True,
            )
            sys.stdout.flush()
        os._exit(code)

    timer = threading.Timer(seconds, force)
    timer.daemon = True
    timer.start()


_SIGNALLED: dict[str, int] = {}
"""The signal the selftest received, kept where no exception can lose it."""


def _pass_on(signum: int) -> None:
    """Stop the workers' runs with the signal that stopped the selftest. Sent to this process alone (a
    ``kill <pid>``), the selftest would otherwise wait for each running miniature to end."""
    for worker in multiprocessing.active_children():
        if worker.pid is not None:
            with contextlib.suppress(OSError):
                os.kill(worker.pid, signum)


def _raise_interrupt(signum: int, frame: object) -> None:
    _SIGNALLED["signum"] = signum
    stop = KeyboardInterrupt(signal.Signals(signum).name)
    stop.signum = signum  # type: ignore[attr-defined]
    raise stop


def _default_matrix(package: str) -> Path | None:
    module = importlib.import_module(package)
    files = getattr(module, "__file__", None)
    return Path(files).with_name(MATRIX_NAME) if files else None

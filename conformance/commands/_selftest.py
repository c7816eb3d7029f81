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
import tomllib
from collections.abc import Callable, Iterable, Sequence
from concurrent.futures import ProcessPoolExecutor, as_completed
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from ..boundary._errors import ConformanceError
from ..reporting import Report, broken_requirements

__all__ = ["MatrixRow", "MiniatureResult", "SelftestResult", "load_matrix", "run_selftest", "selftest_main"]

DEFAULT_MINIATURES = "tests.miniatures"
MATRIX_NAME = "matrix.toml"
_CAUGHT = ("failed", "errored")


@dataclass(frozen=True)
class MatrixRow:
    """One row of the matrix: a miniature, the requirements it violates, and scenarios that must catch it."""

    name: str
    module: str
    kind: Literal["broken", "conforming", "noted"]
    caught_by: frozenset[str]
    violates: frozenset[str] = frozenset()
    notes: frozenset[str] = frozenset()
    advice: frozenset[str] = frozenset()
    freedoms: frozenset[str] = frozenset()

    def adapter(self, package: str) -> str:
        """The adapter address ``package.module:name`` that :func:`run_conformance` loads."""
        return f"{package}.{self.module}:{self.name}"


@dataclass
class MiniatureResult:
    """What one run against one miniature gave, compared with its expectation."""

    expectation: MatrixRow
    statuses: dict[str, str]  # scenario id -> status
    requirements: dict[str, str]  # scenario id -> requirement id
    seconds: float
    output: str = ""
    error: str | None = None
    interrupted: int | None = None  # the signal that stopped this miniature's run: the selftest stops
    broken: dict[str, tuple[str, ...]] = field(default_factory=dict)  # scenario id -> requirements broken
    noted: frozenset[str] = frozenset()  # rule ids the report noted, anywhere
    advised: frozenset[str] = frozenset()  # advice ids the report gave

    @property
    def caught_by(self) -> frozenset[str]:
        return frozenset(i for i, s in self.statuses.items() if s in _CAUGHT)

    @property
    def attributed(self) -> frozenset[str]:
        """Scenarios that failed it under one of the requirements it violates."""
        want = self.expectation.violates
        return frozenset(
            i for i, s in self.statuses.items() if s == "failed" and set(self.broken.get(i, ())) <= want
        )

    @property
    def caught(self) -> bool:
        """Caught under its named requirement (a conforming or noted one: failed or errored anywhere)."""
        if self.expectation.kind != "broken":
            return bool(self.caught_by)
        return bool(self.attributed)

    @property
    def unnoted(self) -> frozenset[str]:
        """Notes and advice the matrix expects that the report did not give."""
        return (self.expectation.notes - self.noted) | (self.expectation.advice - self.advised)

    @property
    def unexpected(self) -> frozenset[str]:
        """Scenarios that errored, or failed under a requirement the miniature does not violate."""
        return self.caught_by - self.attributed

    @property
    def missed(self) -> frozenset[str]:
        """Scenarios the matrix expects to catch the miniature that passed it (or never ran)."""
        return self.expectation.caught_by - self.caught_by

    @property
    def ok(self) -> bool:
        return self.error is None and not self.unexpected and not self.missed and not self.unnoted


@dataclass
class SelftestResult:
    """The whole matrix: per-miniature results, the seed that replays it, and the verdicts."""

    results: list[MiniatureResult]
    seed: int
    seconds: float
    scenario_ids: list[str] = field(default_factory=list)

    @property
    def broken(self) -> list[MiniatureResult]:
        return [r for r in self.results if r.expectation.kind == "broken"]

    @property
    def mutation_score(self) -> tuple[int, int]:
        """(caught, broken miniatures)."""
        return sum(r.caught for r in self.broken), len(self.broken)

    def scenarios_catching_nothing(self) -> list[str]:
        """Scenario ids that caught no broken miniature: spec text the miniatures do not exercise."""
        catching = {i for r in self.broken for i in r.attributed}
        return [i for i in self.scenario_ids if i not in catching]

    @property
    def ok(self) -> bool:
        """Every miniature behaved as the matrix says: no escape, no false alarm, no drift."""
        return all(r.ok for r in self.results)


def load_matrix(path: str | Path) -> list[MatrixRow]:
    """Read and check the matrix file; a mistake names the miniature and what to fix."""
    path = Path(path)
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, tomllib.TOMLDecodeError) as exc:
        raise ConformanceError(f"cannot read the mutation matrix {path}: {exc}") from None
    rows = data.get("miniatures")
    if not isinstance(rows, dict) or not rows:
        raise ConformanceError(f"{path} has no [miniatures.<Name>] tables")
    out = []
    for name, row in rows.items():
        kind = row.get("kind")
        caught_by = row.get("caught_by", [])
        violates = row.get("violates", [])
        if kind not in ("broken", "conforming", "noted") or not isinstance(row.get("module"), str):
            raise ConformanceError(
                f"{path}: miniature {name!r} needs module = '<module>' and kind = 'broken', 'conforming' "
                "or 'noted'"
            )
        if kind == "noted" and not row.get("notes"):
            raise ConformanceError(
                f"{path}: noted miniature {name!r} names no rule in notes (e.g. ['dropped'])"
            )
        if kind == "broken" and not violates:
            raise ConformanceError(
                f"{path}: broken miniature {name!r} names no requirement in violates (e.g. violates = "
                "['rank-order'])"
            )
        if kind != "broken" and (caught_by or violates):
            raise ConformanceError(
                f"{path}: {kind} miniature {name!r} must not list caught_by or violates: "
                "the kit must pass it everywhere"
            )
        out.append(
            MatrixRow(
                name=name,
                module=row["module"],
                kind=kind,
                caught_by=frozenset(caught_by),
                violates=frozenset(violates),
                notes=frozenset(row.get("notes", [])),
                advice=frozenset(row.get("advice", [])),
                freedoms=frozenset(row.get("freedoms", [])),
            )
        )
    return out


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
            done = (future.result() for future in as_completed(futures))
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


# -- presentation --------------------------------------------------------------------------------


def format_selftest_matrix(outcome: SelftestResult) -> str:
    """Miniature x requirement: how many scenarios of each requirement caught it, and the verdict."""
    requirements: dict[str, None] = {}
    for r in outcome.results:
        requirements.update(dict.fromkeys(r.requirements.values()))
    columns = list(requirements)
    header = ("miniature", "kind", *columns, "verdict")
    rows = []
    for r in outcome.results:
        per_req = {
            c: sum(1 for i in r.caught_by if c in (r.broken.get(i) or (r.requirements.get(i),)))
            for c in columns
        }
        rows.append(
            (r.expectation.name, r.expectation.kind, *(str(per_req[c] or ".") for c in columns), _verdict(r))
        )
    widths = [max(len(row[i]) for row in (header, *rows)) for i in range(len(header))]

    def line(row: Iterable[str]) -> str:
        return "  ".join(cell.ljust(w) for cell, w in zip(row, widths, strict=True)).rstrip()

    caught, broken = outcome.mutation_score
    lines = [line(header), line("-" * w for w in widths), *map(line, rows), ""]
    lines.append(f"mutation score: {caught}/{broken} broken miniatures caught")
    for r in outcome.results:
        if r.unexpected:
            shown = [
                f"{i} ({r.statuses[i]}: {', '.join(r.broken.get(i, ())) or 'no requirement'})"
                for i in sorted(r.unexpected)
            ]
            lines.append(f"  {r.expectation.name}: unexpected {', '.join(shown)}")
        if r.missed:
            lines.append(f"  {r.expectation.name}: expected to be caught by {sorted(r.missed)}, but passed")
        if r.unnoted:
            lines.append(f"  {r.expectation.name}: expected notes or advice {sorted(r.unnoted)}, not given")
        if r.error:
            lines.append(f"  {r.expectation.name}: {r.error}")
    idle = outcome.scenarios_catching_nothing()
    if idle:
        lines.append(f"scenarios that caught no broken miniature: {', '.join(idle)}")
    lines.append(f"seed {outcome.seed} (replay: --seed {outcome.seed}); {outcome.seconds:.0f} s")
    return "\n".join(lines)


def _verdict(r: MiniatureResult) -> str:
    if r.error:
        return "ERROR"
    if r.expectation.kind != "broken":
        if r.caught:
            return "FALSE ALARM"
        if r.unnoted:
            return "NOTE MISSING"
        return "passes (noted)" if r.expectation.kind == "noted" else "passes"
    if not r.caught:
        return "ESCAPED" if not r.caught_by else "MISATTRIBUTED"
    if r.unexpected:
        return "caught (+MISATTRIBUTED)"
    return "caught" if r.ok else "caught (MATRIX DRIFT)"


def selftest_main(
    *, miniatures: str, matrix: str | None, milvus: str, seed: int | None, profile: str, jobs: int = 2
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
        print(f"  {r.expectation.name:<36} {_verdict(r):<22} {r.seconds:5.1f} s", flush=True)

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
            jobs=jobs,
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

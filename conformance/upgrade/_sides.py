"""The two sides of ``rag-conformance upgrade``: the labelled set through the adapter, on two engines.

The judge evaluates through the Protocol, so any implementation is evaluated the same way (the
reference, an in-process adapter, a stdio program): it embeds the set once, hands the same corpus to one
adapter instance per engine (``prepare``), and asks every query in each mode (``lookup``) with the same
settings. The ranking is the accepted blocks the implementation returns, in its order.

Both engines are up at once where they can be (two servers of one fixed-port engine cannot), and the
queries alternate between them in a random order per query, so that machine load falls on both alike:
that is the latency sample, as well as the evaluation. Where they cannot run at once, each engine runs
in turn, and the latency ratio says it was not interleaved.

Two instances of one engine on one machine are not equally fast (memory layout, caches, which core
they landed on): an instance effect that a test paired over queries cannot see. Where both engines
can be started a second time beside the first two (the twins: not for fixed-port engines), the same
queries go to all four, interleaved, and the gate measures latency beyond what two instances of one
engine differ by (:mod:`._latency`). Quality is compared between the first two.

A p99 needs 500 lookups: after every query has been asked (its answer is the one judged), each is
timed again on every instance, in a new random order, round after round, until the lookups timed reach
500 (:func:`._latency.timing_rounds`: 4 rounds on the bundled set's 137 queries; a set under 63
queries is timed once). The repeats are timed only; one that fails is kept as no time.

A lookup that raises is asked once more; what fails again is recorded as that query's error (data
for the error-rate row, never a reason to drop the mode). A mode the implementation declines
(:class:`NotApplicable`: the engine lacks the feature) is not run on that engine.
"""

from __future__ import annotations

import random
import sys
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass, field, replace
from typing import Any

from evaluation import LabelledSet

from ..adapters._loading import load_adapter
from ..boundary._decline import NotApplicable
from ..boundary._errors import ConformanceError, EngineDeadlineError
from ..boundary._protocol import Corpus, CorpusChunk, LookupRequest, Mode
from ..boundary._signals import join_in_slices
from ..engines import Engine, EngineUnavailableError, engine_label, parse_engine_address, start_engine
from ..engines._deadline import call_deadline
from ..engines._facts import engine_facts
from ..engines._local import LOCAL_ENGINES
from ._labelled import embed
from ._latency import timing_rounds
from ._settings import Lookup

__all__ = [
    "MODES",
    "EngineEvaluation",
    "Evaluations",
    "Outcome",
    "calibrates",
    "engine_label",
    "evaluate_engines",
    "open_engine",
]

MODES: tuple[Mode, ...] = ("dense", "hybrid")
WARM_UP = 2  # lookups per engine and mode before timing: first calls load collections and caches
# prepare makes several engine calls (create, insert, index, load): it gets this many call deadlines.
_PREPARE_CALLS = 4


@dataclass(frozen=True)
class Outcome:
    """One query's answer on one engine in one mode, or the error it ended in (asked twice)."""

    query_id: str
    ranking: tuple[str, ...]  # evidence keys of the accepted blocks, in order
    top_quality: float | None
    low_quality: bool
    level: str
    path: str
    seconds: float | None  # None when it errored
    error: str | None = None  # the second failure's first line
    repeats: tuple[float | None, ...] = ()  # the same lookup timed again (for a p99); None: it failed

    @property
    def timings(self) -> tuple[float | None, ...]:
        """Every timed lookup of this query here, the first (the answer judged) and its repeats."""
        return (self.seconds, *self.repeats)

    @classmethod
    def failed(cls, query_id: str, error: str) -> Outcome:
        return cls(query_id, (), None, False, "NONE", "", None, error)


@dataclass
class EngineEvaluation:
    """One engine's evaluation: per mode its outcomes, or why the mode did not run there."""

    engine: str
    version: str = "?"
    outcomes: dict[str, list[Outcome]] = field(default_factory=dict)
    not_run: dict[str, str] = field(default_factory=dict)  # mode -> why
    failed: str | None = None  # the whole engine: why nothing ran


def open_engine(address: str) -> Engine:
    """Start or reach an engine by the address ``rag-conformance engines`` takes (``lite-2.5.1`` too)."""
    # A server that does not answer in 10 s is down (as `engines` reads it); a local engine or a
    # container needs to boot, within its own budget (start_engine's default).
    kind = parse_engine_address(address).kind
    return start_engine(address, startup_timeout=None if kind in ("local", "container") else 10.0)


def _can_overlap(old: str, new: str) -> bool:
    spec = LOCAL_ENGINES.get(old)
    return not (old == new and spec is not None and spec.fixed_ports)


def calibrates(old: str, new: str) -> bool:
    """Whether a second instance of each engine can run beside the first two (not fixed-port ones)."""
    fixed = [LOCAL_ENGINES[a].fixed_ports for a in (old, new) if a in LOCAL_ENGINES]
    return _can_overlap(old, new) and not any(fixed)


@dataclass(frozen=True)
class Evaluations:
    """Both sides, whether their lookups were interleaved, and the second instances of both engines."""

    old: EngineEvaluation
    new: EngineEvaluation
    interleaved: bool
    twins: tuple[EngineEvaluation, EngineEvaluation] | None = None  # the old engine's, the new engine's


class _Side:
    """One engine with its own adapter instance, prepared with the corpus."""

    def __init__(
        self, address: str, evaluation: EngineEvaluation, adapter: Any, info: Any, engine: Engine
    ) -> None:
        self.address = address
        self.engine = engine
        self.evaluation = evaluation
        self.adapter = adapter
        self.info = info

    def ask(self, request: LookupRequest, query_id: str) -> Outcome | None:
        mode = request.mode
        if mode in self.evaluation.not_run or self.evaluation.failed:
            return None
        error = ""
        for _attempt in range(2):  # a failure is asked once more, as the suite does with engine errors
            try:
                reply, seconds = within_deadline(
                    lambda: _timed(self.adapter.lookup, request), "lookup", self.address, self.engine
                )
                break
            except NotApplicable as exc:
                # The implementation declines the mode here: the engine lacks what it needs.
                self.evaluation.not_run[mode] = f"the implementation declines it: {_first_line(exc)}"
                self.evaluation.outcomes.pop(mode, None)
                return None
            except EngineDeadlineError as late:
                self.evaluation.failed = f"{engine_label(self.address)} was lost at query {query_id}: {late}"
                return None
            except Exception as exc:
                error = _first_line(exc)
                try:
                    self.engine.check_reachable()
                except EngineUnavailableError as lost:
                    # The engine is gone: an infrastructure problem, never the engine's or the adapter's.
                    self.evaluation.failed = (
                        f"{engine_label(self.address)} was lost at query {query_id}: {lost}"
                    )
                    return None
        else:
            return Outcome.failed(query_id, error)
        return Outcome(
            query_id,
            tuple(dict.fromkeys(b.evidence_key for b in reply.blocks)),
            reply.top_quality_score,
            bool(reply.is_low_quality),
            str(reply.relevance_level),
            str(reply.path),
            seconds,
        )

    def time(self, request: LookupRequest) -> float | None:
        """The same lookup once more, timed only (its answer was judged already); None if it fails."""
        started = time.perf_counter()
        try:
            self.adapter.lookup(request)
        except (Exception, NotApplicable):
            return None
        return time.perf_counter() - started


def _timed(call: Callable[[LookupRequest], Any], request: LookupRequest) -> tuple[Any, float]:
    started = time.perf_counter()
    reply = call(request)
    return reply, time.perf_counter() - started


def within_deadline(
    call: Callable[[], Any], what: str, address: str, engine: Engine, *, quiet: bool = False
) -> Any:
    """``call()`` (one call of the implementation: ``what``), waited for at most the kit's engine-call
    deadline (:mod:`conformance.engines._deadline`), several times over for ``prepare``'s many calls.

    An implementation's client may wait for ever on an engine that stopped answering; the call runs on
    a daemon thread, so that the upgrade ends NOT JUDGED in bounded time, naming the engine and the
    call, with the engine given up on (what the thread still waits for is dropped at exit). ``quiet``:
    on the way out (``close``), a call past it is left behind without an error.
    """
    result: dict[str, Any] = {}

    def run() -> None:
        try:
            result["value"] = call()
        except BaseException as exc:  # carried over to the caller's thread
            result["error"] = exc

    deadline = call_deadline() * (_PREPARE_CALLS if what == "prepare" else 1)
    if engine.abandoned:
        if quiet:
            return None
        raise EngineDeadlineError(f"{engine_label(address)} was given up on: {what} was not asked")
    worker = threading.Thread(target=run, name=f"rqs-upgrade-{what}", daemon=True)
    worker.start()
    join_in_slices(worker, deadline)  # a stop signal ends the wait at once
    if worker.is_alive():
        engine.abandon(f"the implementation's {what} got no answer within {deadline:.0f} s")
        if quiet:
            return None
        raise EngineDeadlineError(
            f"{engine_label(address)} stopped answering: the implementation's {what} got no answer within "
            f"{deadline:.0f} s (the kit's engine-call deadline, stretched with the machine's load)",
            engine=engine_label(address),
            call=what,
        )
    error = result.get("error")
    if error is None:
        return result.get("value")
    if quiet and isinstance(error, Exception) and not _answers(engine):
        # On the way out, a close that failed because the engine stopped answering (the implementation's
        # own deadline came before the kit's: on a loaded machine the kit's is stretched) is that engine's
        # loss, which the run already tells; raised here it would hide it behind a traceback.
        engine.abandon(f"the implementation's {what} failed and the engine did not answer")
        return None
    raise error


def _answers(engine: Engine) -> bool:
    """Whether the engine answers one short question now (it may have stopped answering)."""
    try:
        engine.check_reachable()
    except EngineUnavailableError:
        return False
    return True


def _first_line(exc: BaseException) -> str:
    """A failure in one line: a decline's reason, or the exception's type and message."""
    why = str(getattr(exc, "reason", None) or f"{type(exc).__name__}: {exc}").strip()
    return why.splitlines()[0] if why else type(exc).__name__


def _corpus(labelled: LabelledSet, vectors: Sequence[tuple[float, ...]]) -> Corpus:
    return Corpus(
        name="upgrade",
        dim=len(vectors[0]) if vectors else 1,
        chunks=tuple(
            CorpusChunk(
                doc_id=c.doc_id,
                chunk_index=c.chunk_index,
                text=c.text,
                vector=v,
                category=c.category,
                source_type=c.source_type,
            )
            for c, v in zip(labelled.corpus, vectors, strict=True)
        ),
    )


def _silent_engine_given_up_after_a_signal(engine: Engine) -> Callable[..., bool]:
    def probe(exc_type: type[BaseException] | None, exc: BaseException | None, tb: object) -> bool:
        if isinstance(exc, KeyboardInterrupt):
            engine.after_interrupt()
        return False  # the signal goes on

    return probe


@contextmanager
def _side(address: str, adapter_spec: str, corpus: Corpus, stack: ExitStack) -> Iterator[_Side]:
    evaluation = EngineEvaluation(address)
    engine = stack.enter_context(open_engine(address))
    evaluation.version = engine.server_version()
    adapter, info = load_adapter(adapter_spec)
    stack.callback(lambda: within_deadline(adapter.close, "close", address, engine, quiet=True))
    stack.push(_silent_engine_given_up_after_a_signal(engine))  # unwound first: before the close above
    # What the suite's prepare is told about the engine (version, API level, what it lacks), told here too.
    facts = engine_facts(evaluation.version)
    endpoint = engine.endpoint.model_copy(update={"engine": facts})
    if facts.bm25 is False or facts.hybrid_search is False:
        # The spec's hybrid mode is dense ANN + a BM25 Function + RRF: an engine without them lacks it.
        evaluation.not_run["hybrid"] = (
            f"{engine_label(address)} ({evaluation.version}) has no BM25 full-text search or hybrid_search "
            f"(the kit's engine facts, {facts.docs})"
        )
    for mode in MODES:
        if not info.supports("lookup", mode):
            evaluation.not_run[mode] = f"the adapter {info.name} does not declare lookup for mode {mode}"
    try:
        within_deadline(lambda: adapter.prepare(endpoint, corpus), "prepare", address, engine)
    except EngineDeadlineError:
        raise  # the engine stopped answering: not the implementation's fault, and no mode can run
    except (Exception, NotApplicable) as exc:
        engine.check_reachable()  # an engine that is gone: NOT JUDGED, not the implementation's fault
        # The engine answers but the implementation cannot hold its corpus there: no mode can run.
        why = _first_line(exc)
        for mode in MODES:
            evaluation.not_run.setdefault(mode, f"prepare failed: {why}")
    yield _Side(address, evaluation, adapter, info, engine)


def evaluate_engines(
    adapter_spec: str,
    old: str,
    new: str,
    labelled: LabelledSet,
    lookup: Lookup,
    *,
    seed: int = 0,
    progress: Callable[[str, int], Any] | None = None,
    output: Any = None,
) -> Evaluations:
    """Evaluate ``labelled`` on both engines (and, where :func:`calibrates`, on their twins)."""
    out = output or sys.stderr
    print(f"upgrade: embedding {len(labelled.corpus)} chunks and {len(labelled.queries)} queries", file=out)
    vectors = embed([c.text for c in labelled.corpus])
    query_vectors = embed([q.query for q in labelled.queries])
    corpus = _corpus(labelled, vectors)
    overlap = _can_overlap(old, new)
    rng = random.Random(seed)
    if overlap:
        addresses = [old, new, old, new] if calibrates(old, new) else [old, new]
        with ExitStack() as stack:
            sides = [_start(stack, address, adapter_spec, corpus, out) for address in addresses]
            _ask_all(sides, labelled, query_vectors, lookup, rng, progress)
        twins = (sides[2].evaluation, sides[3].evaluation) if len(sides) == 4 else None
        return Evaluations(sides[0].evaluation, sides[1].evaluation, True, twins)
    done = []
    for address in (old, new):
        with ExitStack() as stack:
            side = _start(stack, address, adapter_spec, corpus, out)
            _ask_all([side], labelled, query_vectors, lookup, rng, progress)
            done.append(side.evaluation)
    return Evaluations(done[0], done[1], False)


def _start(stack: ExitStack, address: str, adapter_spec: str, corpus: Corpus, out: Any) -> _Side:
    label = engine_label(address)
    print(f"upgrade: starting {label} and preparing the corpus", file=out, flush=True)
    try:
        return stack.enter_context(_side(address, adapter_spec, corpus, stack))
    except ConformanceError:
        raise
    except Exception as exc:
        raise ConformanceError(
            f"{label}: preparing the evaluation failed: {type(exc).__name__}: {exc}"
        ) from exc


def _ask_all(
    sides: list[_Side],
    labelled: LabelledSet,
    query_vectors: Sequence[tuple[float, ...]],
    lookup: Lookup,
    rng: random.Random,
    progress: Callable[[str, int], Any] | None,
) -> None:
    config = lookup.config()
    for mode in MODES:
        requests = [
            (
                q.id,
                LookupRequest(
                    query_text=q.query,
                    query_vector=v,
                    mode=mode,
                    category=q.category,
                    retrieve_k=lookup.retrieve_k,
                    rrf_k=lookup.rrf_k,
                    config=config,
                ),
            )
            for q, v in zip(labelled.queries, query_vectors, strict=True)
        ]
        for side in sides:
            side.evaluation.outcomes.setdefault(mode, [])
            for query_id, request in requests[:WARM_UP]:
                side.ask(request, query_id)  # untimed; a decline here already says the mode cannot run
        for query_id, request in requests:
            order = list(sides)
            rng.shuffle(order)  # who goes first alternates at random, so neither always runs warm
            for side in order:
                outcome = side.ask(request, query_id)
                if outcome is not None and mode in side.evaluation.outcomes:
                    side.evaluation.outcomes[mode].append(outcome)
            if progress is not None:
                progress(mode, len(sides))
        _time_again(sides, mode, requests, rng, progress)


def _time_again(
    sides: list[_Side],
    mode: str,
    requests: Sequence[tuple[str, LookupRequest]],
    rng: random.Random,
    progress: Callable[[str, int], Any] | None,
) -> None:
    """Time every answered lookup of ``mode`` again, round after round (:func:`timing_rounds`), in a new
    random order per query, so that the lookups timed reach a p99; the answers judged stay the first."""
    live = [s for s in sides if mode in s.evaluation.outcomes and not s.evaluation.failed]
    answered = {id(s): {o.query_id: o for o in s.evaluation.outcomes[mode]} for s in live}
    extra: dict[int, dict[str, list[float | None]]] = {id(s): {} for s in live}
    for _round in range(1, timing_rounds(len(requests))):
        for query_id, request in requests:
            order = [
                s for s in live if query_id in answered[id(s)] and answered[id(s)][query_id].error is None
            ]
            rng.shuffle(order)
            for side in order:
                extra[id(side)].setdefault(query_id, []).append(side.time(request))
            if progress is not None:
                progress(mode, len(order))
    for side in live:
        if mode in side.evaluation.outcomes:
            side.evaluation.outcomes[mode] = [
                replace(o, repeats=tuple(extra[id(side)].get(o.query_id, ())))
                for o in side.evaluation.outcomes[mode]
            ]

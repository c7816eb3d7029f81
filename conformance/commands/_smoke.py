"""``rag-conformance smoke``: the handshake, one call per declared capability, then the hard inputs.

Not a verdict on the spec (that is ``rag-conformance run``): it checks that the implementation speaks
the protocol, strictly (the kit's lines validated, stdout noise an error), and says in plain words
what to change when it does not. Then it sends the hard inputs a real run may send (blank queries,
categories with quotes or newlines, other scripts, long hint lists, the largest k:
:mod:`._smoke_edges`) and names each one the program rejects, with the request.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any

from ..boundary._errors import AdapterCallError, ConformanceError
from ..boundary._protocol import (
    Capability,
    Corpus,
    CorpusChunk,
    ImplementationInfo,
    LookupRequest,
    PostProcessRequest,
    QualityRequest,
    SearchRequest,
    WireCandidate,
)
from ..boundary._visible import visible_text
from ..stdio._adapter import NotApplicable, StdioAdapter
from ._smoke_edges import EDGE_CHUNKS, pure_edges, report_edges, store_edges

__all__ = ["ADVICE", "advice_for", "smoke"]

Say = Callable[[str], None]

ADVICE: dict[str, str] = {
    "start:not_json": "the first line on stdout was not JSON: did you print a banner or a log line? "
    "Log to stderr instead; stdout carries protocol lines only",
    "not_json": "a reply was not one line of JSON: print exactly one JSON object per line (no pretty "
    "printing), and send logs to stderr",
    "not_object": 'each reply must be a JSON object such as {"seq": 1, "result": ...}',
    "wrong_seq": 'copy the request\'s "seq" into its reply, and answer requests in the order they come',
    "ahead": 'copy the request\'s "seq" into its reply, and answer requests in the order they come',
    "noisy": "stdout carries protocol lines only: send logs to stderr",
    "too_long": "a line on stdout was megabytes long: stdout carries one JSON reply per line, each a few "
    "kilobytes; send logs and dumps to stderr",
    "not_utf8": "write stdout as UTF-8, whatever the locale (a JVM: new PrintStream(new "
    "FileOutputStream(FileDescriptor.out), true, StandardCharsets.UTF_8)); the kit reads UTF-8 only",
    "non_finite": "NaN and Infinity are not JSON: reply with a finite number (or null where the field "
    "allows it); Gson writes a bare NaN for a NaN double, so check before replying",
    "invalid": "the reply does not match the protocol: see the field errors above, and "
    "`rag-conformance schema --out DIR` for the JSON Schema of every reply",
    "start:timeout": "no answer to start: read stdin line by line, answer each line at once, and flush "
    "stdout after every reply (Python: print(..., flush=True))",
    "timeout": "the call took longer than the timeout: if it is only slow, raise --adapter-timeout",
    "exited": "the process exited: see its stderr above; it must keep reading stdin until it gets "
    '"stop" (or end of input)',
    "cannot_run": "the command could not be started: check the program name, PATH and the working dir",
    "remote_error": "the implementation replied with an error: see its message above",
    "skipped": "it declared this capability but skipped the call: declare only what it answers",
}


def advice_for(error: BaseException, operation: str) -> str:
    """Plain advice for an error a smoke call raised."""
    if isinstance(error, NotApplicable):
        return ADVICE["skipped"]
    if isinstance(error, AdapterCallError):
        return ADVICE["remote_error"]
    problem = getattr(error, "problem", None) or "invalid"
    return ADVICE.get(f"{operation}:{problem}") or ADVICE.get(problem) or ADVICE["invalid"]


def smoke(
    command: str | Sequence[str], *, timeout: float = 30.0, milvus: str = "lite", say: Say = print
) -> int:
    """Handshake, then one strict call per declared capability. 0 when all spoke the protocol, 1 when
    one did not, 2 when the kit's side failed (the engine for search and lookup could not be started).

    Every line is said through ``visible_text``: the program's name, version, fields and error words
    are its own, and a control character in them is shown as its escape, never sent to the terminal."""
    shown = say

    def say(text: str) -> None:
        shown(visible_text(text))

    # What the wire tolerates but advises against (a byte-order mark, cut stderr lines) is said as it comes.
    adapter = StdioAdapter(
        command,
        timeout=timeout,
        validate=True,
        strict_stdout=True,
        on_warning=lambda text: say(f"warn {text}"),
    )
    try:
        try:
            info = adapter.describe()
        except ConformanceError as exc:
            say(f"FAIL start: {exc}")
            say(f"  advice: {advice_for(exc, 'start')}")
            return 1
        language = info.language or 'language unknown: add "language" to the start reply'
        say(f"ok   start: {info.name} {info.version} ({language}); capabilities: {_caps(info)}")
        if info.model_extra:
            say(f"note start: fields the protocol does not define, kept and reported: {_extra(info)}")
        _notes(say, "start", adapter)
        failures = sum(not _check(say, name, call, adapter) for name, call in _pure_calls(adapter, info))
        failures += report_edges(pure_edges(adapter, info), say) if not info.needs_milvus else 0
        if info.needs_milvus:
            try:
                failures += _milvus_calls(adapter, info, milvus, say)
            except _EngineNotStartedError:
                return 2  # the kit's side failed: nothing said about the program (one rule: exit 2)
        else:
            failures += not _check(say, "stop", lambda: adapter.close(strict=True))
        return 1 if failures else 0
    finally:
        adapter.close()


class _EngineNotStartedError(Exception):
    """The engine for search and lookup could not be started or reached: infrastructure, exit 2."""


def _extra(info: ImplementationInfo) -> str:
    return ", ".join(f"{key}={value!r}" for key, value in sorted((info.model_extra or {}).items()))


def _caps(info: ImplementationInfo) -> str:
    return ", ".join(sorted(str(c) for c in info.capabilities)) or "none"


def _check(say: Say, operation: str, call: Callable[[], Any], adapter: StdioAdapter | None = None) -> bool:
    try:
        answer = call()
    except (ConformanceError, NotApplicable) as exc:
        say(f"FAIL {operation}: {exc}")
        say(f"  advice: {advice_for(exc, operation)}")
        return False
    shown = repr(answer)
    say(f"ok   {operation}: {shown if len(shown) <= 160 else shown[:160] + '…'}")
    if adapter is not None:
        _notes(say, operation, adapter)
    return True


def _notes(say: Say, operation: str, adapter: StdioAdapter) -> None:
    """Fields the protocol does not define beside a reply's result: kept, noted, never a failure."""
    for note in adapter.take_notes():
        say(f"note {operation}: {note}; kept, never failed")


def _pure_calls(adapter: StdioAdapter, info: ImplementationInfo) -> list[tuple[str, Callable[[], Any]]]:
    declared = set(info.capabilities)
    calls: list[tuple[str, Callable[[], Any]]] = []
    if Capability.LABELS in declared:
        calls.append(("canonicalize_label", lambda: adapter.canonicalize_label("rrf_fused")))
    if Capability.QUALITY in declared:
        quality = QualityRequest(score_label="dense", score=0.5)
        calls.append(("quality_score", lambda: adapter.quality_score(quality)))
    if Capability.POST_PROCESS in declared:
        candidates = (
            WireCandidate(doc_id="a", chunk_index=0, original_rank=1, score=0.2, score_label="dense"),
            WireCandidate(doc_id="b", chunk_index=0, original_rank=2, score=0.9, score_label="dense"),
        )
        post = PostProcessRequest(candidates=candidates)
        calls.append(("post_process", lambda: adapter.post_process(post)))
    return calls


def _unit(*values: float) -> tuple[float, ...]:
    norm = math.sqrt(sum(v * v for v in values))
    return tuple(v / norm for v in values)


MODES = ("dense", "hybrid")

_TINY = Corpus(
    name="smoke",
    dim=4,
    chunks=(
        CorpusChunk(doc_id="n1", chunk_index=0, text="failover gateway pairs", vector=_unit(1, 0.1, 0, 0),
                    category="network"),
        CorpusChunk(doc_id="s1", chunk_index=0, text="snapshot nightly copies", vector=_unit(0.1, 1, 0, 0),
                    category="storage"),
        CorpusChunk(doc_id="b1", chunk_index=0, text="invoice monthly cycles", vector=_unit(0, 0.2, 1, 0),
                    category="billing"),
        *EDGE_CHUNKS,
    ),
)  # fmt: skip


def _milvus_calls(adapter: StdioAdapter, info: ImplementationInfo, milvus: str, say: Say) -> int:
    from ..engines import start_engine
    from ..engines._facts import engine_facts

    say(f"...  starting a Milvus engine ({milvus}) for search and lookup")
    try:
        engine = start_engine(milvus)
    except ConformanceError as exc:
        say(f"FAIL engine: {exc} (this is the kit's side, not the implementation's; exit code 2)")
        raise _EngineNotStartedError from None
    with engine:
        facts = engine_facts(str(engine.describe().get("version")))
        say(f"...  engine {facts.version} (Milvus API {facts.api_level or 'unknown'}; see {facts.docs})")
        endpoint = engine.endpoint.model_copy(update={"engine": facts})
        if not _check(say, "prepare", lambda: adapter.prepare(endpoint, _TINY), adapter):
            return 1
        query = _unit(1, 0.05, 0, 0)
        calls: list[tuple[str, Callable[[], Any]]] = []
        for mode in MODES:
            if info.supports("search", mode):
                request = SearchRequest(query_text="failover", query_vector=query, mode=mode, k=2)
                calls.append((f"search ({mode})", lambda r=request: adapter.search(r)))
        for mode in MODES:
            if info.supports("lookup", mode):
                lookup = LookupRequest(
                    query_text="failover", query_vector=query, mode=mode, category="network"
                )
                calls.append((f"lookup ({mode})", lambda r=lookup: adapter.lookup(r)))
        failures = sum(not _check(say, name, call, adapter) for name, call in calls)
        edges = [*pure_edges(adapter, info), *store_edges(adapter, info, query)]
        failures += report_edges(iter(edges), say)
        # stop drops the implementation's collection, before the engine goes away
        failures += not _check(say, "stop", lambda: adapter.close(strict=True))
        return failures

"""The hard inputs ``rag-conformance smoke`` sends after its plain calls: what a real run may send.

A program that answers the plain calls can still refuse a blank query, a category with a quote or a
newline, CJK text or a long hint list; a real run sends those (the generated knowledge base has every
kind, :mod:`conformance.corpus`), but a team meets each only when a seed draws it. ``smoke`` sends
them all, per declared capability and mode, and says which the program rejects (an error reply, a
crash, an unreadable or invalid reply), with the request. It judges no answer: that is the run's work.
A request the program declines (``skipped``) is said too, but is not a rejection: the run reads it as
not applicable.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

from ..boundary._errors import ConformanceError
from ..boundary._protocol import (
    Capability,
    CorpusChunk,
    Hints,
    ImplementationInfo,
    LookupRequest,
    PostProcessConfig,
    PostProcessRequest,
    QualityRequest,
    SearchRequest,
    WireCandidate,
)
from ..judging._spec_model._labels import LABELS
from ..stdio._adapter import NotApplicable, StdioAdapter

__all__ = ["EDGE_CHUNKS", "LARGEST_K", "Edge", "pure_edges", "report_edges", "store_edges"]

Say = Callable[[str], None]

LARGEST_K = 30
"""The largest k (and retrieveK) a run's generated requests ask for (the knowledge base's ``max_k``)."""
RRF_KS = (1, 1000)  # the smallest and largest RRF k a run's generated requests use
_LINE_CHARS = 400


def _unit(*values: float) -> tuple[float, ...]:
    norm = math.sqrt(sum(v * v for v in values))
    return tuple(v / norm for v in values)


# Category values as a real run's knowledge base writes them, and one with a newline; one chunk each,
# so a filter that mangles the literal finds nothing instead of its chunk (smoke says no more than that).
QUOTES, BACKSLASH = 'O\'Reilly "Media"', "C:\\shares\\kb"
NEWLINE, OTHER_SCRIPT = "line one\nline two", "产品文档"
EDGE_CHUNKS = tuple(
    CorpusChunk(doc_id=f"edge-{i}", chunk_index=0, text=text, vector=_unit(1, 0.3, 0.1 * i, 0.2), category=c)
    for i, (c, text) in enumerate(
        (
            (QUOTES, 'failover "quoted" gateway O\'Reilly'),
            (BACKSLASH, "failover backslash \\ path"),
            (NEWLINE, "failover across\nlines"),
            (OTHER_SCRIPT, "数据库 备份 恢复 🙂 failover"),
        ),
        start=1,
    )
)
_CATEGORIES = (
    ("a category with quotes", QUOTES),
    ("a category with a backslash", BACKSLASH),
    ("a category with a newline", NEWLINE),
    ("a category in another script", OTHER_SCRIPT),
    ("a category no chunk has (the search finds nothing)", "Legal / Compliance"),
)
_QUERIES = (
    ("a blank query", ""),
    ("a whitespace query", " \t\n"),
    ("a CJK and emoji query", "数据库 备份 🙂🚀"),
    ("a query of quotes and a backslash", '" failover " OR 1=1 \\ --'),
    ("a query that matches nothing", "zzqx qqzz"),
    ("a long query", " ".join(["如何", "вернуть", "the", "🙃", "¿qué"] * 8) + " failover"),
)
_WORDS = (*(f"word{i}" for i in range(55)), "O'Reilly", '"cheese"', "C:\\kb", "数据库", "🙂")
_HINTS = (
    ("long hint lists (60 keywords, 60 entities)", Hints(keywords=_WORDS, entities=_WORDS)),
    (
        "hints in other scripts, with quotes",
        Hints(domain="产品文档", source_type="wiki page", keywords=_WORDS[-5:]),
    ),
)


@dataclass(frozen=True)
class Edge:
    """One hard input: the capability (and mode) it probes, what is hard about it, and the call."""

    where: str
    what: str
    call: Callable[[], Any]


def pure_edges(adapter: StdioAdapter, info: ImplementationInfo) -> Iterator[Edge]:
    """Hard inputs of the pure capabilities: every alias, float32 noise, the largest batch and ranks."""
    declared = set(info.capabilities)
    if Capability.LABELS in declared:
        for label in (label for label, kind in LABELS.items() if label != kind):  # the legacy aliases
            yield Edge("labels", f"the legacy label {label!r}", lambda x=label: adapter.canonicalize_label(x))
    if Capability.QUALITY in declared:
        questions = (
            ("a distance a hair below 0 (float32 noise)", QualityRequest(score_label="dense", score=-1e-12)),
            ("a distance past maxL2Distance", QualityRequest(score_label="l2_distance", score=8.0)),
            ("maxL2Distance 10", QualityRequest(score_label="dense", score=3.0, max_l2_distance=10.0)),
            (
                "a hybrid score at rank 12 of 12",
                QualityRequest(score_label="rrf_fused", score=1000.0, original_rank=12, batch_size=12),
            ),
            (
                "a hybrid score with a dense distance",
                QualityRequest(score_label="hybrid", score=0.02, dense_distance=0.5),
            ),
        )
        for what, request in questions:
            yield Edge("quality", what, lambda r=request: adapter.quality_score(r))
    if Capability.POST_PROCESS in declared:
        candidates = tuple(
            WireCandidate(
                doc_id=doc,
                chunk_index=i % 2,
                text=text,
                original_rank=i // 2 + 1,
                score=0.1 * i,
                score_label="l2_distance",
                category=QUOTES if i % 3 else NEWLINE,
            )
            for i, (doc, text) in enumerate(
                (
                    ("产品手册-01", "数据库 备份 🙂"),
                    ("FAQ 1: Passwort zurücksetzen", 'say "cheese"'),
                    ("C:\\kb", "a\nb"),
                )
                * 4
            )
        )
        config = PostProcessConfig(return_n=12, max_chunks_per_document=12)
        for what, hints in _HINTS:
            request = PostProcessRequest(candidates=candidates, hints=hints, config=config)
            yield Edge("post_process", f"12 candidates in other scripts, tied ranks, {what}",
                       lambda r=request: adapter.post_process(r))  # fmt: skip


def store_edges(adapter: StdioAdapter, info: ImplementationInfo, query: tuple[float, ...]) -> Iterator[Edge]:
    """Hard inputs of search and lookup, per declared mode, on the smoke corpus (with :data:`EDGE_CHUNKS`)."""
    shared: list[tuple[str, dict[str, Any]]] = [
        *((what, {"query_text": text}) for what, text in _QUERIES),
        *((what, {"category": category}) for what, category in _CATEGORIES),
    ]
    for mode in ("dense", "hybrid"):
        rrf = [(f"RRF k {rrf_k}", {"rrf_k": rrf_k}) for rrf_k in RRF_KS] if mode == "hybrid" else []
        base: dict[str, Any] = {"query_text": "failover", "query_vector": query, "mode": mode}
        if info.supports("search", mode):
            largest = (f"k {LARGEST_K}, the largest a run uses", {"k": LARGEST_K})
            for what, fields in [*shared, largest, *rrf]:
                search = SearchRequest(**{**base, "k": 3, **fields})
                yield Edge(f"search ({mode})", what, lambda r=search: adapter.search(r))
        if info.supports("lookup", mode):
            hinted = [(what, {"hints": hints}) for what, hints in _HINTS]
            largest = (f"retrieveK {LARGEST_K}, the largest a run uses", {"retrieve_k": LARGEST_K})
            for what, fields in [*shared, *hinted, largest, *rrf]:
                lookup = LookupRequest(**{**base, **fields})
                yield Edge(f"lookup ({mode})", what, lambda r=lookup: adapter.lookup(r))


def report_edges(edges: Iterator[Edge], say: Say) -> int:
    """Send every edge; say each one rejected or declined, then one line of counts. Returns the rejections.

    Rejections of one capability with the same error (a program that refuses every blank query the same
    way) are said in one line, naming the first request, and then which other inputs met that error.
    """
    sent = declined = 0
    rejections: dict[tuple[str, str], list[tuple[Edge, ConformanceError]]] = {}
    for edge in edges:
        sent += 1
        try:
            edge.call()
        except NotApplicable as exc:
            declined += 1
            say(f"note {edge.where} declines {edge.what}: {_line(str(exc))}")
        except ConformanceError as exc:
            rejections.setdefault((edge.where, _reason(exc)), []).append((edge, exc))
    for group in rejections.values():
        edge, exc = group[0]
        say(f"REJECTS {edge.where}, {edge.what}: {_line(str(exc))}")
        if len(group) > 1:
            say(f"  the same for {'; '.join(other.what for other, _ in group[1:])}")
    rejected = sum(len(group) for group in rejections.values())
    if sent:
        counts = f"{sent - rejected - declined} answered" + (f", {rejected} rejected" if rejected else "")
        counts += f", {declined} declined" if declined else ""
        advice = "; a real run sends these: fix each rejection before the first run" if rejected else ""
        say(f"{'FAIL' if rejected else 'ok  '} hard inputs: {sent} sent, {counts} (no answer judged){advice}")
    return rejected


def _reason(error: ConformanceError) -> str:
    """What a rejection said, without the request: the program's own message, or the kit's detail."""
    cause = getattr(error, "cause", None)
    detail = str(cause) if cause is not None else getattr(error, "detail", None)
    return f"{type(error).__name__}: {detail if detail is not None else error}"


def _line(text: str) -> str:
    first = text.strip().splitlines()[0] if text.strip() else ""
    return first if len(first) <= _LINE_CHARS else first[: _LINE_CHARS - 1] + "…"

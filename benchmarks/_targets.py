"""The benchmarks' targets in one place, with no import of Milvus, so ``render`` and the run agree.

Issue 25 set a budget instead of a chase: lookup / bare ``hybrid_search`` at or below 1.08x on Lite
2.5.1 at 10k chunks and 1.03x at 100k, 1.03x on Lite 3.x at every size; ``post_process`` of 100
candidates within 250 us (the 100 us and 1 ms targets of the C++ speed issue are retired). The
10k figure then became 1.11x: the readable reference measured 1.107x there (the frozen tuned path
1.081x in the same run), below LlamaIndex's and Haystack's, and the guide keeps clarity over a percent.
"""

from __future__ import annotations

__all__ = [
    "CONFORMANCE_S",
    "LOOKUP_TARGETS",
    "PEER_MARGIN",
    "PIPELINE_SIZE",
    "PIPELINE_TARGET",
    "POSTPROCESS_US",
    "lookup_target",
]

# lookup p50 / bare hybrid_search p50, by (engine, size); (engine, None) is every size of that engine.
LOOKUP_TARGETS: dict[tuple[str, int | None], float] = {
    ("lite-2.5.1", 10_000): 1.11,
    ("lite-2.5.1", 100_000): 1.03,
    ("lite", None): 1.03,
}
PEER_MARGIN = 0.01  # the reference's lookup / bare may exceed a peer's by a point at most
PIPELINE_TARGET, PIPELINE_SIZE = 0.85, 100_000  # reference / legacy pipeline p50, at 100k chunks
POSTPROCESS_US = {"100": 250.0}  # microseconds per call, by batch size
CONFORMANCE_S = 20.0  # `rag-conformance run` wall time


def lookup_target(engine: str, size: int) -> float | None:
    """The lookup / bare budget of this (engine, size), or ``None`` where none is set."""
    return LOOKUP_TARGETS.get((engine, size), LOOKUP_TARGETS.get((engine, None)))

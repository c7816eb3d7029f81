"""Where a lookup's client time goes, without a profiler: the reference's own stages, timed.

cProfile slows every Python call, so its shares overstate the reference's part. Here each stage of a
hybrid lookup is timed with two clock reads around the function that does it, on the measured
queries, twice: right after the engine's reply (as the interleaved figures run), and again on the same
replies replayed from memory with nothing else in between (the same work, warm). The gap between the
two is what running right after the engine costs (meanwhile this core ran gRPC and pymilvus, and the
engine worked through the cache both cores share).

The stages are looked up by name where the store and ``lookup_knowledge`` call them, and put back
after; nothing else of the reference changes.
"""

from __future__ import annotations

import statistics
import time
from collections import defaultdict
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from typing import Any

import reference._lookup
import reference.store._store

__all__ = ["STAGES", "stage_times"]

# (what the stage does, module that calls it, the name it calls) in the order a lookup runs them.
STAGES = (
    ("query vector: checked and packed", reference.store._store, "prepared_query"),
    ("reply: fields and vectors read", reference.store._store, "hybrid_hits"),
    ("denseDistance for every hit", reference.store._store, "squared_l2"),
    ("candidates built and checked", reference.store._store, "candidates"),
    ("post_process", reference._lookup, "post_process"),
)
_ENGINE_CALL = "pymilvus hybrid_search (request, engine, reply)"
_REST = "the rest (lookup_knowledge, search arguments, requests, result)"


@contextmanager
def _timed(client: Any, record: Callable[[str, float], None], reply: Callable[..., Any]) -> Iterator[None]:
    """Every stage, and the client's ``hybrid_search`` (answered by ``reply``), timed into ``record``."""
    clock = time.perf_counter

    def wrap(name: str, call: Callable[..., Any]) -> Callable[..., Any]:
        def timed(*args: Any, **kwargs: Any) -> Any:
            start = clock()
            try:
                return call(*args, **kwargs)
            finally:
                record(name, clock() - start)

        return timed

    saved = [(module, name, getattr(module, name)) for _, module, name in STAGES]
    own = vars(client).get("hybrid_search")  # an instance's own hybrid_search, put back after
    try:
        for (label, module, name), (_, _, original) in zip(STAGES, saved, strict=True):
            setattr(module, name, wrap(label, original))
        client.hybrid_search = wrap(_ENGINE_CALL, reply)
        yield
    finally:
        if own is None:
            del client.hybrid_search  # the instance attribute: the class's method shows again
        else:
            client.hybrid_search = own
        for module, name, original in saved:
            setattr(module, name, original)


def stage_times(
    lookup: Callable[[Any], Any], client: Any, queries: Sequence[Any], *, replays: int = 5
) -> dict[str, Any]:
    """Median microseconds per lookup for each stage: on the engine, and replayed warm.

    ``lookup(query)`` runs one hybrid lookup through ``client``. Each query first runs on the engine
    (its reply kept), then the kept replies answer ``replays`` more passes over the same queries.
    """
    if not queries:
        return {}
    engine_call = client.hybrid_search
    replies: list[Any] = []
    found: dict[str, dict[str, list[float]]] = {"engine": defaultdict(list), "warm": defaultdict(list)}

    def ask(*args: Any, **kwargs: Any) -> Any:
        replies.append(engine_call(*args, **kwargs))
        return replies[-1]

    def run(where: str, reply: Callable[..., Any]) -> None:
        times = found[where]
        with _timed(client, lambda name, seconds: times[name].append(seconds), reply):
            for query in queries:
                start = time.perf_counter()
                lookup(query)
                times["total"].append(time.perf_counter() - start)

    run("engine", ask)
    for _ in range(replays):
        run("warm", _replay(iter(replies)))
    return {
        "queries": len(queries),
        "replays": replays,
        "us": {where: _medians(times) for where, times in found.items()},
    }


def _replay(kept: Iterator[Any]) -> Callable[..., Any]:
    """A ``hybrid_search`` that answers with the kept replies, in order."""
    return lambda *args, **kwargs: next(kept)


def _medians(times: dict[str, list[float]]) -> dict[str, float]:
    """Median microseconds per stage; "the rest" is the median of what the stages leave of each total."""
    out = {label: round(statistics.median(times[label]) * 1e6, 1) for label, _, _ in STAGES if times[label]}
    timed = [label for label, _, _ in STAGES] + [_ENGINE_CALL]
    if all(len(times[name]) == len(times["total"]) for name in timed):
        per_lookup = zip(times["total"], *(times[name] for name in timed), strict=True)
        rest = [total - sum(parts) for total, *parts in per_lookup]
        out[_REST] = round(statistics.median(rest) * 1e6, 1)
    out[_ENGINE_CALL] = round(statistics.median(times[_ENGINE_CALL]) * 1e6, 1)
    out["client work (all but the pymilvus call)"] = round(
        sum(value for name, value in out.items() if name != _ENGINE_CALL), 1
    )
    return out

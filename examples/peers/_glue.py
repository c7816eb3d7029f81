"""The glue: what none of the three libraries provides, written once for all of them.

Standard library only: it runs inside each library's own virtual environment, which has neither the
kit nor the reference. Everything here is named in each adapter's README, so the conformance matrix
separates what a library does from what this module adds. The names a README lists:

- ``canonical_label``: the spec's two score labels and the three legacy aliases. No library labels
  its scores.
- ``spec_dense_quality``: the spec's dense formula, for a library without a distance-to-relevance
  function (LlamaIndex).
- ``rank_quality``: the hybrid rank mapping ``1 - (r - 1) / n``. No library normalizes a fused score.
- ``post_process``: retrieval-rank order, dedup by chunk, the per-document cap and return-n.
- ``gates``: the relevance level and the low-quality flag from the top qualityScore, where the library
  has no gate of its own.
- ``lookup``: search, post-process and the category low-quality retry (the retry replaces the
  filtered result).

A library's own behaviour enters through a :class:`Peer`: its store, its searches, its native scores,
and where it has them its relevance function (``dense_quality``) and its gate (``library_gate``).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

__all__ = [
    "LABELS",
    "Peer",
    "canonical_label",
    "connection_args",
    "gates",
    "lookup",
    "post_process",
    "quality",
    "rank_quality",
    "spec_dense_quality",
]

Message = dict[str, Any]

LABELS = {
    "dense": "dense",
    "hybrid": "hybrid",
    "l2_distance": "dense",
    "rrf_fused": "hybrid",
    "bm25_only_no_dense": "hybrid",
}
RETRIEVAL_RANK = "retrieval_rank"  # the one hitReason the glue gives: hints never explain or move a hit


class GlueError(ValueError):
    """Input the glue cannot use; the message names the field and the value."""


def connection_args(endpoint: Message) -> Message:
    """The kit's Milvus endpoint as pymilvus ``connection_args``: the URI, and token and database when set."""
    connection: Message = {"uri": endpoint["uri"]}
    if endpoint.get("token"):
        connection["token"] = endpoint["token"]
    if endpoint.get("dbName"):
        connection["db_name"] = endpoint["dbName"]
    return connection


def canonical_label(label: str) -> str:
    """``dense`` or ``hybrid`` for a canonical label or a legacy alias."""
    try:
        return LABELS[label]
    except (KeyError, TypeError):
        raise GlueError(f"unknown scoreLabel {label!r}; expected one of {sorted(LABELS)}") from None


def spec_dense_quality(distance: float | None, max_l2: float) -> float:
    """The spec's dense formula ``max(0, 1 - min(d, maxL2) / maxL2)``; a null distance is 0."""
    if distance is None:
        return 0.0
    return max(0.0, 1.0 - min(max(distance, 0.0), max_l2) / max_l2)


def rank_quality(rank: int, batch: int) -> float:
    """Hybrid quality from rank alone: rank 1 is 1.0, never increasing, never the RRF magnitude."""
    if batch < 1 or rank < 1:
        raise GlueError(f"originalRank {rank!r} and batch size {batch!r} must both be at least 1")
    return max(0.0, 1.0 - (rank - 1) / batch)


class Peer:
    """One library behind the glue. Subclasses override what their library provides."""

    name = "peer"
    homepage: str | None = None
    packages: tuple[str, ...] = ()  # distributions whose versions the handshake reports
    capabilities: tuple[str, ...] = ("labels", "quality", "post_process", "search", "lookup")

    def version(self) -> str:
        """The installed versions of :attr:`packages`, e.g. ``langchain-milvus 0.4.0, pymilvus 3.0.2``."""
        from importlib.metadata import version

        return ", ".join(f"{package} {version(package)}" for package in self.packages)

    def dense_quality(self, distance: float | None, max_l2: float) -> float:
        """Quality of a dense L2 distance. The glue's spec formula unless the library has its own."""
        return spec_dense_quality(distance, max_l2)

    def library_gate(self, blocks: Sequence[Message], threshold: float) -> bool | None:
        """The library's own low-quality gate over accepted candidates, or None when it has none."""
        return None

    def prepare(self, endpoint: Message, corpus: Message) -> None:
        raise NotImplementedError

    def search(self, request: Message) -> list[Message]:
        """Hits in engine order, as wire hits; a hit may carry ``_quality``, the library's relevance."""
        raise NotImplementedError

    def close(self) -> None:
        """Drop what :meth:`prepare` created."""


def quality(peer: Peer, request: Message) -> float:
    """The single normalizer: it branches on the canonical label only."""
    max_l2 = request.get("maxL2Distance", 2.0)
    if canonical_label(request["scoreLabel"]) == "dense":
        return peer.dense_quality(request.get("score"), max_l2)
    return rank_quality(request.get("originalRank", 1), request.get("batchSize", 1))


def _candidate_quality(peer: Peer, candidate: Message, batch: int, max_l2: float) -> float:
    if candidate.get("_quality") is not None:
        return float(candidate["_quality"])  # the library already turned its score into a relevance
    request = {
        "scoreLabel": candidate["scoreLabel"],
        "score": candidate.get("score"),
        "originalRank": candidate["originalRank"],
        "batchSize": batch,
        "maxL2Distance": max_l2,
    }
    return quality(peer, request)


def gates(top: float | None, config: Message) -> tuple[str, bool]:
    """Relevance level and low-quality flag from the top qualityScore and the configured thresholds."""
    high = config.get("highlyRelevantThreshold", 0.75)
    reference = config.get("referenceThreshold", 0.5)
    if top is None:
        return "NONE", True
    level = "PRECISE" if top >= high else "RELEVANT" if top >= reference else "WEAK" if top > 0 else "NONE"
    return level, top < reference


def post_process(peer: Peer, request: Message) -> Message:
    """Rank order, dedup, per-document cap and return-n; then qualityScores and the gates."""
    config = request.get("config", {})
    cap = config.get("maxChunksPerDocument", 2)
    return_n = config.get("returnN", 5)
    max_l2 = config.get("maxL2Distance", 2.0)
    candidates = request["candidates"]
    accepted: list[Message] = []
    dropped: list[Message] = []
    seen: set[str] = set()
    per_document: dict[str, int] = {}
    for candidate in sorted(candidates, key=lambda c: c["originalRank"]):  # sorted() is stable
        key = f"{candidate['docId']}#{candidate['chunkIndex']}"
        reason = None
        if key in seen:
            reason = "duplicate"
        elif per_document.get(candidate["docId"], 0) >= cap:
            reason = "per_document_cap"
        elif len(accepted) >= return_n:
            reason = "return_n"
        seen.add(key)
        if reason is None:
            per_document[candidate["docId"]] = per_document.get(candidate["docId"], 0) + 1
            accepted.append(candidate)
        else:
            dropped.append({"evidenceKey": key, "originalRank": candidate["originalRank"], "reason": reason})
    blocks = [
        {
            "evidenceKey": f"{c['docId']}#{c['chunkIndex']}",
            "docId": c["docId"],
            "chunkIndex": c["chunkIndex"],
            "originalRank": c["originalRank"],
            "qualityScore": _candidate_quality(peer, c, len(candidates), max_l2),
            "scoreLabel": canonical_label(c["scoreLabel"]),
            "hitReasons": [RETRIEVAL_RANK],
        }
        for c in accepted
    ]
    top = max((b["qualityScore"] for b in blocks), default=None)
    level, low = gates(top, config)
    library_low = peer.library_gate(accepted, config.get("referenceThreshold", 0.5))
    return {
        "blocks": blocks,
        "dropped": dropped,
        "relevanceLevel": level,
        "topQualityScore": top,
        "isLowQuality": low if library_low is None else library_low,
    }


def lookup(peer: Peer, request: Message) -> Message:
    """Search, post-process, and retry without the category when the filtered result is low quality."""
    shared = {key: request[key] for key in ("queryText", "queryVector") if key in request}
    shared.update(mode=request.get("mode", "hybrid"), k=request.get("retrieveK", 20))
    shared["rrfK"] = request.get("rrfK", 60)

    def run(category: str | None) -> Message:
        hits = peer.search({**shared, "category": category})
        return post_process(peer, {"candidates": hits, "config": request.get("config", {})})

    category = request.get("category")
    if category is None:
        return {**run(None), "path": "unfiltered"}
    filtered = run(category)
    if not filtered["isLowQuality"]:
        return {**filtered, "path": "filtered"}
    return {**run(None), "path": "unfiltered_retry"}


def public(hit: Message) -> Message:
    """A hit as it goes on the wire: the glue's private keys (``_quality``) stay home."""
    return {key: value for key, value in hit.items() if not key.startswith("_")}


def ranked(rows: Sequence[Any], make: Callable[[Any, int], Message]) -> list[Message]:
    """Wire hits from a library's result list, in its order, with ``originalRank`` 1..n."""
    return [make(row, rank) for rank, row in enumerate(rows, start=1)]

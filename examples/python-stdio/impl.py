#!/usr/bin/env python3
"""A minimal rag-retrieval-quality-score implementation that speaks the kit's stdio protocol.

What a third party writes: no import of the kit or of its reference, standard library only. It
declares the pure capabilities (labels, quality, post_process); scenarios that need search or lookup
are reported NOT APPLICABLE. Judge it with:

    rag-conformance run --adapter-cmd "python examples/python-stdio/impl.py"

Protocol: read one JSON object per line on stdin, answer each with one JSON object per line on stdout,
``{"seq": <the request's seq>, "result": ...}``. Logs go to stderr, never to stdout.
"""

from __future__ import annotations

import json
import sys
import traceback
from typing import Any

CANONICAL = {"dense": "dense", "hybrid": "hybrid"}
LEGACY = {"l2_distance": "dense", "rrf_fused": "hybrid", "bm25_only_no_dense": "hybrid"}


class DeclinedError(Exception):
    """A question this implementation does not answer: the kit reports NOT APPLICABLE."""


def canonicalize(label: str) -> str:
    try:
        return {**CANONICAL, **LEGACY}[label]
    except KeyError:
        raise ValueError(f"unknown scoreLabel {label!r}") from None


def l2_quality(distance: float | None, max_l2: float) -> float:
    """The spec's dense formula: max(0, 1 - min(d, maxL2) / maxL2); null -> 0."""
    if distance is None:
        return 0.0
    return max(0.0, 1.0 - min(max(distance, 0.0), max_l2) / max_l2)


def quality(label: str, score: Any, rank: int, batch: int, max_l2: float, dense: Any) -> float:
    """The single normalizer: it branches on the canonical label only."""
    if canonicalize(label) == "dense":
        return l2_quality(score, max_l2)
    if dense is not None:  # optional dense distance: absolute similarity for the gates
        return l2_quality(dense, max_l2)
    return max(0.0, 1.0 - (rank - 1) / batch)  # rank 1 -> 1.0, never the RRF magnitude


def post_process(request: dict[str, Any]) -> dict[str, Any]:
    """Retrieval order (originalRank, stable), dedup, per-document cap, return-n, then the gates."""
    config, hints = request.get("config", {}), request.get("hints", {})
    max_l2 = config.get("maxL2Distance", 2.0)
    candidates = request["candidates"]
    ordered = sorted(candidates, key=lambda c: c["originalRank"])  # sorted() is stable
    blocks, dropped, seen, per_doc = [], [], set(), {}
    for c in ordered:
        key = f"{c['docId']}#{c['chunkIndex']}"
        reason = None
        if key in seen:
            reason = "duplicate"
        elif per_doc.get(c["docId"], 0) >= config.get("maxChunksPerDocument", 2):
            reason = "per_document_cap"
        elif len(blocks) >= config.get("returnN", 5):
            reason = "return_n"
        seen.add(key)
        if reason in (None, "return_n"):
            per_doc[c["docId"]] = per_doc.get(c["docId"], 0) + 1
        if reason:
            dropped.append({"evidenceKey": key, "originalRank": c["originalRank"], "reason": reason})
            continue
        q = quality(
            c["scoreLabel"],
            c.get("score"),
            c["originalRank"],
            len(candidates),
            max_l2,
            c.get("denseDistance"),
        )
        text = c.get("text", "").casefold()
        reasons = ["retrieval_rank"]  # hints explain a hit; they never move or rescore it
        if any(k and k.casefold() in text for k in hints.get("keywords", [])):
            reasons.append("l0_keyword_overlap")
        blocks.append(
            {
                "evidenceKey": key,
                "docId": c["docId"],
                "chunkIndex": c["chunkIndex"],
                "originalRank": c["originalRank"],
                "qualityScore": q,
                "scoreLabel": canonicalize(c["scoreLabel"]),
                "hitReasons": reasons,
            }
        )
    top = max((b["qualityScore"] for b in blocks), default=None)
    high, ref = config.get("highlyRelevantThreshold", 0.75), config.get("referenceThreshold", 0.5)
    level = "NONE"  # no evidence, or nothing above quality 0 under any threshold
    if top is not None:
        level = "PRECISE" if top >= high else "RELEVANT" if top >= ref else "WEAK" if top > 0 else "NONE"
    return {
        "blocks": blocks,
        "dropped": dropped,
        "relevanceLevel": level,
        "topQualityScore": top,
        "isLowQuality": top is None or top < ref,
    }


def answer(message: dict[str, Any]) -> Any:
    kind = message["type"]
    if kind == "start":
        capabilities = ["labels", "quality", "post_process"]
        return {
            "name": "python-stdio-example",
            "version": "0.1.0",
            "language": "python",
            "capabilities": capabilities,
        }
    if kind == "canonicalize_label":
        return canonicalize(message["label"])
    if kind == "quality_score":
        r = message["request"]
        return quality(
            r["scoreLabel"],
            r.get("score"),
            r.get("originalRank", 1),
            r.get("batchSize", 1),
            r.get("maxL2Distance", 2.0),
            r.get("denseDistance"),
        )
    if kind == "post_process":
        return post_process(message["request"])
    if kind == "stop":
        return None
    raise DeclinedError(f"this example does not implement {kind!r}")


def main() -> None:
    for line in sys.stdin:
        message = json.loads(line)
        seq = message["seq"]
        try:
            reply = {"seq": seq, "result": answer(message)}
        except DeclinedError as exc:
            reply = {"seq": seq, "skipped": str(exc)}
        except Exception as exc:
            error = {"message": str(exc), "kind": type(exc).__name__, "context": traceback.format_exc()}
            reply = {"seq": seq, "error": error}
        print(json.dumps(reply), flush=True)  # one line per reply, flushed: the kit is waiting
        if message["type"] == "stop":
            return


if __name__ == "__main__":
    main()

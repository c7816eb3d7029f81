"""The kit's stdio protocol for every peer adapter: one JSON object a line in, one a line out.

Standard library only. Library logs go to stderr; stdout carries replies and nothing else, so the
library's own prints are redirected while a call runs.
"""

from __future__ import annotations

import contextlib
import json
import sys
import traceback
from typing import Any

from _glue import Peer, canonical_label, lookup, post_process, public, quality

__all__ = ["serve"]


def _answer(peer: Peer, message: dict[str, Any]) -> Any:
    kind = message["type"]
    if kind == "start":
        return {
            "name": peer.name,
            "version": peer.version(),
            "language": "python",
            "homepage": peer.homepage,
            "capabilities": list(peer.capabilities),
        }
    if kind == "canonicalize_label":
        return canonical_label(message["label"])
    if kind == "quality_score":
        return quality(peer, message["request"])
    if kind == "post_process":
        return post_process(peer, message["request"])
    if kind == "prepare":
        peer.prepare(message["endpoint"], message["corpus"])
        return None
    if kind == "search":
        return {"hits": [public(hit) for hit in peer.search(message["request"])]}
    if kind == "lookup":
        return lookup(peer, message["request"])
    if kind == "stop":
        peer.close()
        return None
    raise ValueError(f"unknown message type {kind!r}")


def serve(peer: Peer) -> None:
    """Answer the kit until it says stop or closes stdin."""
    out = sys.stdout
    for line in sys.stdin:
        message = json.loads(line)
        try:
            with contextlib.redirect_stdout(sys.stderr):  # a library print must not break the protocol
                reply = {"seq": message["seq"], "result": _answer(peer, message)}
        except Exception as exc:
            error = {"message": str(exc), "kind": type(exc).__name__, "context": traceback.format_exc()}
            reply = {"seq": message.get("seq"), "error": error}
        out.write(json.dumps(reply) + "\n")
        out.flush()
        if message.get("type") == "stop":
            return
    peer.close()

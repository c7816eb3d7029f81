"""A Node.js miniature over stdio (issue 51): the pure capabilities written from the spec, with the
per-document counter in a plain JavaScript object (broken) or a Map (conforming).

:func:`PlainObjectCounter` breaks rank-order: "WHEN more than `rag.max-chunks-per-document` chunks share
a docId THEN only the best-ranked ... up to the cap SHALL remain". A plain object already answers
``constructor``, ``toString``, ``valueOf``, ``hasOwnProperty`` and ``__proto__``, so the cap never binds
for a document with such an id; only those ids show it, and every run now sends them
(``conformance/corpus/_hostile.py``). :func:`MapCounter` is the same program with a ``Map``: it conforms.
"""

from __future__ import annotations

import shutil
from pathlib import Path

from conformance.stdio import StdioAdapter

__all__ = ["MapCounter", "PlainObjectCounter"]

_PROGRAM = Path(__file__).resolve().parent / "node" / "plain_object_counter.js"


def _node(counter: str) -> StdioAdapter:
    node = shutil.which("node")
    if node is None:
        raise RuntimeError("the Node.js miniatures need `node` (v18 or later) on PATH: install Node.js")
    return StdioAdapter([node, str(_PROGRAM)], env={"RQS_COUNTER": counter}, timeout=30)


def PlainObjectCounter() -> StdioAdapter:
    return _node("object")


def MapCounter() -> StdioAdapter:
    return _node("map")

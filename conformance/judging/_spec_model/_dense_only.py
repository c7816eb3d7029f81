"""Dense mode's engine calls (R6): "search SHALL call dense ANN only", read from what the kit's recording
proxy saw the implementation ask Milvus (readings 17)."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Protocol

from ._rules import Violation, violation

__all__ = ["DATA_READS", "EngineCall", "check_dense_only"]

DATA_READS = frozenset({"Search", "HybridSearch", "Query", "SearchByPrimaryKeys"})
"""Engine calls that read the collection's data (every other call is schema, loading or housekeeping)."""


class _Target(Protocol):
    @property
    def kind(self) -> str: ...


class EngineCall(Protocol):
    """What the recording proxy saw of one engine call (see ``RecordedCall``)."""

    @property
    def method(self) -> str: ...
    @property
    def collection(self) -> str | None: ...
    @property
    def searches(self) -> Sequence[_Target]: ...
    @property
    def expr(self) -> str | None: ...
    @property
    def result_keys(self) -> tuple[object, ...] | None: ...
    @property
    def primary_field(self) -> str | None: ...
    def describe(self) -> str: ...


def check_dense_only(
    calls: Sequence[EngineCall],
    what: str,
    *,
    hybrid_collections: frozenset[str] | None = None,
    repeated: bool = False,
    known_empty: bool = False,
) -> list[Violation]:
    """R6: in dense mode every data-reading engine call is a dense ANN search, and there is one; on the
    collection hybrid mode searches (``hybrid_collections``, when known): "a same-collection baseline".

    Fetching the rows of exactly the hits a dense search returned, by their primary keys, hydrates that
    search (text, metadata); it retrieves nothing, and is allowed (readings 17). A scalar query whose
    filter could return any other row is retrieval, and fails.

    ``repeated``: every search this question needs was asked of Milvus before, by a dense ANN search, in
    this run. No call at all is then an answer from memory (a cache): "dense ANN only" forbids other
    kinds of calls, not a missing one; whether the answer is the dense search's is ``dense-hits``'s
    question (readings 17).

    ``known_empty``: the answer has no hits and the dense search's has none either (a category no chunk
    carries). No call is then an answer the implementation knew without asking (its list of categories,
    its partitions), as a cached answer is.
    """
    reads = [c for c in calls if c.method in DATA_READS]
    other: list[str] = []
    returned: dict[tuple[str | None, str], set[object]] = {}
    for call in reads:
        if call.method == "Search" and len(call.searches) == 1 and call.searches[0].kind == "dense":
            if call.result_keys is not None and call.primary_field:
                returned.setdefault((call.collection, call.primary_field), set()).update(call.result_keys)
            continue
        if call.method == "Query" and _hydrates(call, returned):
            continue
        other.append(call.describe())
    if other:
        return [violation("dense-only", what, "dense ANN searches only", "; ".join(other))]
    searched = {c.collection for c in reads if c.method == "Search" and c.collection}
    elsewhere = sorted(searched - hybrid_collections) if hybrid_collections else []
    if elsewhere:
        hybrid = ", ".join(sorted(hybrid_collections or ()))
        return [
            violation(
                "dense-only",
                what,
                f"dense ANN on the collection hybrid mode searches ({hybrid}): a same-collection baseline",
                f"a dense search of {', '.join(elsewhere)}",
            )
        ]
    if not any(c.method == "Search" for c in reads) and not ((repeated or known_empty) and not reads):
        return [
            violation(
                "dense-only",
                what,
                "a dense ANN search",
                "no search reached Milvus (" + (", ".join(c.method for c in calls) or "no call") + ")",
            )
        ]
    return []


_IN_LIST = re.compile(r"^\s*\(?\s*(\w+)\s+in\s+\[(.*)\]\s*\)?\s*$", re.IGNORECASE | re.DOTALL)
_EQUALS = re.compile(r"^\s*\(?\s*(\w+)\s*==\s*(.+?)\s*\)?\s*$", re.DOTALL)


def _hydrates(call: EngineCall, returned: Mapping[tuple[str | None, str], set[object]]) -> bool:
    """Whether a query's filter selects only primary keys an earlier dense search of this call returned."""
    if not call.expr:
        return False
    match = _IN_LIST.match(call.expr) or _EQUALS.match(call.expr)
    if match is None:
        return False
    field, values = match.group(1), _literals(match.group(2))
    allowed = returned.get((call.collection, field))
    return bool(values) and allowed is not None and values <= allowed


_ESCAPES = {"n": "\n", "t": "\t", "r": "\r", "\\": "\\", '"': '"', "'": "'"}


def _literals(text: str) -> set[object]:
    """The integer or quoted-string literals of a comma-separated list (empty when anything else).

    String literals are read as Milvus reads them: a backslash escapes the next character (``\\\\``
    is one backslash, ``\\"`` a quote, ``\\n`` a newline), so a key holding a backslash or a quote is
    the key the implementation meant (issue 51: the hostile catalogue's ``C:\\temp\\new``).
    """
    values: set[object] = set()
    i, n = 0, len(text)
    while True:
        while i < n and text[i].isspace():
            i += 1
        if i >= n:
            return values
        if text[i] in "'\"":
            quote, i, chars = text[i], i + 1, []
            while i < n and text[i] != quote:
                if text[i] == "\\" and i + 1 < n:
                    chars.append(_ESCAPES.get(text[i + 1], text[i + 1]))
                    i += 2
                else:
                    chars.append(text[i])
                    i += 1
            if i >= n:
                return set()  # an unterminated literal
            values.add("".join(chars))
            i += 1
        else:
            number = re.match(r"-?\d+", text[i:])
            if number is None:
                return set()
            values.add(int(number.group()))
            i += number.end()
        while i < n and text[i].isspace():
            i += 1
        if i < n and text[i] != ",":
            return set()
        i += 1

"""The values of an in-place upgrade and their comparison: pure, nothing started.

:func:`compare_answers` says, query by query and mode by mode, whether the new engine returned the same
evidence keys in the same order with the same scores (within :data:`SAME_SCORE_WITHIN`) as the old one
on the same data; :func:`compare_inventories` whether the collections, their row counts and their
indexes are all still there.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Literal

from pydantic import BaseModel, ConfigDict

__all__ = [
    "SAME_SCORE_WITHIN",
    "Answer",
    "CollectionState",
    "InPlaceResult",
    "QueryChange",
    "compare_answers",
    "compare_inventories",
    "engine_words",
]

SAME_SCORE_WITHIN = 1e-6
"""Two scores of one block are the same when they differ by at most this much (absolute): the same
data read by the same index returns the same float32 distances; anything beyond rounding is a change."""

InPlaceVerdict = Literal["UNCHANGED", "CHANGED", "CANNOT OPEN"]


class _Value(BaseModel):
    model_config = ConfigDict(frozen=True)


class Answer(_Value):
    """One query's answer in one mode: the accepted blocks' keys and scores in order, or the error."""

    keys: tuple[str, ...] = ()
    scores: tuple[float, ...] = ()
    top: float | None = None
    error: str | None = None


class CollectionState(_Value):
    """A collection as the kit's own client sees it: rows (count(*)) and indexes (field:type:metric)."""

    name: str
    rows: int | None = None
    indexes: tuple[str, ...] = ()
    nullable: tuple[str, ...] = ()  # fields declared nullable
    problem: str | None = None  # what failed when the kit flushed it (before) or loaded it (after)
    # After: loaded, it did not serve at once; seconds until a count(*) answered, and the first answer
    serving_after: float | None = None
    until_serving: str | None = None


class QueryChange(_Value):
    """A query whose answer changed in one mode, and how."""

    query_id: str
    mode: str
    what: str
    old: Answer
    new: Answer


class InPlaceResult(_Value):
    """What an in-place upgrade found. ``exit_code``: 0 unchanged, 1 changed or cannot open."""

    old: str
    new: str
    old_version: str = "?"
    new_version: str = "?"
    verdict: InPlaceVerdict
    engine_words: str | None = None  # the new engine's own error, where it could not open the data
    advice: str | None = None  # what a team does instead
    data: str = ""  # what the data was and where
    before: tuple[CollectionState, ...] = ()
    after: tuple[CollectionState, ...] = ()
    missing: tuple[str, ...] = ()  # collections, rows and indexes not found as they were
    modes: tuple[str, ...] = ()
    queries: int = 0
    changes: tuple[QueryChange, ...] = ()
    tolerance: float = SAME_SCORE_WITHIN

    @property
    def exit_code(self) -> int:
        return 0 if self.verdict == "UNCHANGED" else 1

    def lines(self) -> list[str]:
        """What the terminal shows, the verdict last."""
        out = [f"in place: data {self.data}"]
        if self.verdict == "CANNOT OPEN":
            out.append(f"in place: {self.new} could not open it: {self.engine_words}")
            out.append(f"in place: what to do: {self.advice}")
        else:
            rows = ", ".join(f"{c.name} {c.rows} rows, {len(c.indexes)} index(es)" for c in self.after)
            out.append(f"in place: {self.new} ({self.new_version}) opened it: {rows or 'no collections'}")
            out += [
                f"in place: {c.name} served {c.serving_after:g} s after its load returned; until then it "
                f"answered {c.until_serving}"
                for c in self.after
                if c.serving_after is not None
            ]
            out += [f"in place: missing: {m}" for m in self.missing]
            out += [f"in place: changed: {c.query_id} {c.mode}: {c.what}" for c in self.changes]
        if self.verdict == "UNCHANGED":
            summary = (
                f"every query's answer unchanged ({self.queries} queries x {len(self.modes)} mode(s): "
                f"{', '.join(self.modes)}; same ids, same order, scores within {self.tolerance:g})"
            )
        elif self.verdict == "CHANGED":
            summary = f"{len(self.changes)} answer(s) changed, {len(self.missing)} thing(s) missing"
        else:
            summary = "the new engine cannot open the old engine's data"
        out.append(
            f"verdict in place: {self.verdict} (old {self.old} -> new {self.new}): {summary}; "
            f"exit code {self.exit_code}"
        )
        return out


def engine_words(error: str) -> str:
    """The engine's own sentence in a start failure: the last line naming an error, else the first."""
    lines = [line.strip() for line in error.splitlines() if line.strip()]
    for line in reversed(lines):
        head = line.split(":", 1)[0]
        if head.endswith(("Error", "Exception")) or "failed" in line.lower():
            return line
    return lines[0] if lines else "no words"


def compare_inventories(before: Sequence[CollectionState], after: Sequence[CollectionState]) -> list[str]:
    """What of ``before`` is not in ``after`` as it was: a collection, its row count, an index."""
    found = {c.name: c for c in after}
    missing = []
    for old in before:
        new = found.get(old.name)
        if new is None:
            missing.append(f"collection {old.name} ({old.rows} rows) is gone")
            continue
        if new.problem and not old.problem:
            missing.append(f"collection {old.name}: {new.problem}")
        if old.rows != new.rows:
            missing.append(f"collection {old.name}: {old.rows} rows before, {new.rows} after")
        for index in old.indexes:
            if index not in new.indexes:
                missing.append(f"collection {old.name}: index {index} is gone (now: {list(new.indexes)})")
    return missing


def _answer_change(old: Answer, new: Answer, tolerance: float) -> str | None:
    if old.error or new.error:
        if old.error and new.error:
            return None  # failed before and after: nothing the upgrade changed
        return f"error {'after' if new.error else 'before only'}: {new.error or old.error}"
    if old.keys != new.keys:
        rank = next((i for i, (a, b) in enumerate(zip(old.keys, new.keys, strict=False)) if a != b), None)
        if rank is None:
            return f"{len(old.keys)} block(s) before, {len(new.keys)} after"
        return f"ids differ from rank {rank + 1}: {old.keys[rank]} before, {new.keys[rank]} after"
    worst = max((abs(a - b) for a, b in zip(old.scores, new.scores, strict=True)), default=0.0)
    if old.top is not None and new.top is not None:
        worst = max(worst, abs(old.top - new.top))
    elif (old.top is None) != (new.top is None):
        return f"top score {old.top} before, {new.top} after"
    if worst > tolerance:
        return f"same ids, scores differ by up to {worst:.3g} (tolerance {tolerance:g})"
    return None


def compare_answers(
    before: Mapping[tuple[str, str], Answer],
    after: Mapping[tuple[str, str], Answer],
    *,
    tolerance: float = SAME_SCORE_WITHIN,
) -> list[QueryChange]:
    """Every (query id, mode) of ``before`` whose answer ``after`` differs, in ``before``'s order."""
    changes = []
    for (query_id, mode), old in before.items():
        new = after.get((query_id, mode), Answer(error="not asked after the upgrade"))
        what = _answer_change(old, new, tolerance)
        if what is not None:
            changes.append(QueryChange(query_id=query_id, mode=mode, what=what, old=old, new=new))
    return changes

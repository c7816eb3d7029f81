"""The conformance suite's part of ``rag-conformance upgrade``: its changes by scenario id.

The command runs the suite with the engine checks on both engines (``rag-conformance engines``' run)
and compares the reports (``rag-conformance diff``'s comparison); what the gate reads of that is this
value, so the gate never reaches the commands above it.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from pydantic import BaseModel, ConfigDict

__all__ = ["SuiteChanges"]


class _Value(BaseModel):
    model_config = ConfigDict(frozen=True)


class SuiteChanges(_Value):
    """The suite's changes by scenario id, or why the suites were not compared."""

    compared: bool
    why_not: str | None = None
    old_verdict: str | None = None
    new_verdict: str | None = None
    newly_failing: list[dict[str, Any]] = []
    newly_passing: list[dict[str, Any]] = []
    newly_not_applicable: list[dict[str, Any]] = []
    other: list[dict[str, Any]] = []

    @classmethod
    def from_diff(cls, diff: Any, old_messages: dict[str, str | None]) -> SuiteChanges:
        """The diff's groups; each row with both engines' messages (why it failed, or was not applicable)."""

        def rows(changes: Sequence[Any]) -> list[dict[str, Any]]:
            return [
                {
                    "id": c.id,
                    "old": c.old,
                    "new": c.new,
                    "message": c.message,
                    "old_message": old_messages.get(c.id),
                }
                for c in changes
            ]

        return cls(
            compared=True,
            old_verdict=diff.old_verdict,
            new_verdict=diff.new_verdict,
            newly_failing=rows(diff.newly_failing)
            + rows([c for c in diff.added if c.new in ("failed", "errored")]),
            newly_passing=rows(diff.newly_passing),
            newly_not_applicable=rows(diff.newly_not_applicable),
            other=rows(diff.other) + rows(diff.removed),
        )

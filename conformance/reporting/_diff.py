"""Two conformance reports compared by stable scenario id: the library half of ``rag-conformance diff``.

Reports are read leniently (only scenario ids, statuses, names, messages, the verdict and the
environment are used), so reports written by another kit version still compare. The command
(:mod:`conformance.commands._diff`) prints the comparison; the upgrade check reads it
(:mod:`conformance.upgrade._suite`).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..boundary._errors import ConformanceError

__all__ = ["BAD", "Change", "DiffError", "ReportDiff", "diff_reports", "load_report_data"]

BAD = frozenset({"failed", "errored"})
MESSAGE_WIDTH = 160  # a diff lists many scenarios; the full message is in the report


class DiffError(ConformanceError):
    """A report cannot be read or is not a conformance report."""


@dataclass(frozen=True)
class Change:
    """One scenario whose status differs (``old``/``new`` is None when it is absent on that side)."""

    id: str
    name: str
    old: str | None
    new: str | None
    message: str | None = None

    def line(self) -> str:
        """``id: old -> new: message``."""
        text = f"{self.id}: {self.old or 'absent'} -> {self.new or 'absent'}"
        if not self.message or self.new not in BAD:
            return text
        first = self.message.strip().splitlines()[0]
        return f"{text}: {first if len(first) <= MESSAGE_WIDTH else first[: MESSAGE_WIDTH - 1] + '…'}"


@dataclass(frozen=True)
class ReportDiff:
    """Scenario changes between two reports, grouped, and both environments."""

    old_environment: Mapping[str, Any]
    new_environment: Mapping[str, Any]
    old_verdict: str | None = None
    new_verdict: str | None = None
    newly_failing: tuple[Change, ...] = ()
    newly_passing: tuple[Change, ...] = ()
    newly_not_applicable: tuple[Change, ...] = ()
    added: tuple[Change, ...] = ()
    removed: tuple[Change, ...] = ()
    other: tuple[Change, ...] = field(default=())

    @property
    def regressed(self) -> bool:
        """Whether anything fails now that did not before, an added scenario that fails included."""
        return bool(self.newly_failing) or any(c.new in BAD for c in self.added)


def load_report_data(path: str | Path) -> dict[str, Any]:
    """The report's JSON; :class:`DiffError` when it is missing or has no scenario ids and statuses."""
    path = Path(path)
    if path.is_dir():
        path = path / "report.json"  # a report directory works as well as its report.json
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise DiffError(f"cannot read report {path}: {exc}") from None
    scenarios = data.get("scenarios") if isinstance(data, dict) else None
    if not isinstance(scenarios, list) or not all(
        isinstance(s, dict) and isinstance(s.get("id"), str) and isinstance(s.get("status"), str)
        for s in scenarios
    ):
        raise DiffError(f"{path} is not a conformance report: it needs 'scenarios' with 'id' and 'status'")
    return data


def _by_id(data: Mapping[str, Any]) -> dict[str, dict[str, Any]]:
    return {s["id"]: s for s in data["scenarios"]}


def diff_reports(old: Mapping[str, Any], new: Mapping[str, Any]) -> ReportDiff:
    """Compare two reports' data (as :func:`load_report_data` returns it)."""
    before, after = _by_id(old), _by_id(new)
    groups: dict[str, list[Change]] = {k: [] for k in ("fail", "pass", "na", "added", "removed", "other")}
    for sid in sorted(before.keys() | after.keys()):
        o, n = before.get(sid), after.get(sid)
        ref = n or o
        assert ref is not None
        change = Change(
            sid,
            str(ref.get("name", "")),
            o["status"] if o else None,
            n["status"] if n else None,
            (n or {}).get("message"),
        )
        if o is None:
            groups["added"].append(change)
        elif n is None:
            groups["removed"].append(change)
        elif change.old == change.new:
            continue
        elif change.new in BAD and change.old not in BAD:
            groups["fail"].append(change)
        elif change.new == "passed":
            groups["pass"].append(change)
        elif change.new == "not_applicable":
            groups["na"].append(change)
        else:
            groups["other"].append(change)  # e.g. failed -> errored, passed -> xfailed
    return ReportDiff(
        old_environment=old.get("environment") or {},
        new_environment=new.get("environment") or {},
        old_verdict=old.get("verdict"),
        new_verdict=new.get("verdict"),
        newly_failing=tuple(groups["fail"]),
        newly_passing=tuple(groups["pass"]),
        newly_not_applicable=tuple(groups["na"]),
        added=tuple(groups["added"]),
        removed=tuple(groups["removed"]),
        other=tuple(groups["other"]),
    )

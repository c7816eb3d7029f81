"""``rag-conformance diff OLD.json NEW.json``: what changed between two reports, by stable scenario id.

Made for "before you upgrade Milvus": run the kit on the current engine, then on the candidate, and
diff. The comparison is the reports' library half (:mod:`conformance.reporting._diff`); this module
prints it.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..reporting._diff import BAD, Change, DiffError, ReportDiff, diff_reports, load_report_data

__all__ = ["BAD", "Change", "DiffError", "ReportDiff", "diff_reports", "format_diff", "load_report_data"]

# The fingerprint rows shown side by side, in this order (dotted paths into "environment").
_FINGERPRINT = (
    "milvus.backend",
    "milvus.version",
    "milvus.uri",
    "adapter.name",
    "adapter.version",
    "kit_version",
    "spec_sha256",
    "python",
    "platform",
    "hypothesis_seed",
)


def _lookup(environment: Mapping[str, Any], dotted: str) -> str:
    value: Any = environment
    for part in dotted.split("."):
        value = value.get(part) if isinstance(value, Mapping) else None
    return "-" if value is None else str(value)


def format_diff(diff: ReportDiff, *, old_label: str = "OLD", new_label: str = "NEW") -> str:
    """The environments side by side (``*`` marks a difference), then every group of changes."""
    rows = [("", old_label, new_label)]
    for key in _FINGERPRINT:
        rows.append((key, _lookup(diff.old_environment, key), _lookup(diff.new_environment, key)))
    rows.append(("verdict", str(diff.old_verdict or "-"), str(diff.new_verdict or "-")))
    widths = [max(len(r[i]) for r in rows) for i in range(2)]
    lines = []
    for i, (key, before, after) in enumerate(rows):
        mark = "*" if i and before != after else " "
        lines.append(f"{mark} {key.ljust(widths[0])}  {before.ljust(widths[1])}  {after}".rstrip())
    sections = (
        ("newly failing", diff.newly_failing),
        ("newly passing", diff.newly_passing),
        ("newly not applicable", diff.newly_not_applicable),
        ("added", diff.added),
        ("removed", diff.removed),
        ("other changes", diff.other),
    )
    for title, changes in sections:
        lines.append("")
        lines.append(f"{title} ({len(changes)})" + (":" if changes else ""))
        lines.extend(f"  {change.line()}" for change in changes)
    return "\n".join(lines)

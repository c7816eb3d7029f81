"""The upgrade's files for machines: ``upgrade.json`` (always valid JSON) and ``latency.csv``.

``upgrade.json`` is everything the pages show, plus every query's values on both sides, keyed by mode
and query id (``per_query``), so anyone's tools can redo the comparison. JSON has no NaN and no
infinity (``JSON.parse`` and most readers refuse them): a number that does not exist is ``null``, and
``nulls`` says why, by the JSON Pointer of the value (RFC 6901). The file is serialized with
``allow_nan=False``, so a non-finite number that slipped past the walk is an error here rather than an
invalid file in a CI.

``latency.csv`` holds one lookup per line (``mode, query_id, side, seconds, error``): the sample the
latency rows are computed from, with the lookups that failed and why.
"""

from __future__ import annotations

import csv
import io
import json
import math
from typing import Any

from ..boundary._redact import redact
from ..boundary._visible import visible_text
from ._gate import UpgradeResult

__all__ = ["LATENCY_COLUMNS", "latency_csv", "upgrade_json"]

LATENCY_COLUMNS = ("mode", "query_id", "side", "seconds", "error")


def _per_query(result: UpgradeResult) -> dict[str, dict[str, dict[str, Any]]]:
    """mode -> query id -> "old"/"new" -> {metrics, seconds, error}, in the set's order."""
    keyed: dict[str, dict[str, dict[str, Any]]] = {}
    for mode, sides in result.per_query.items():
        rows = keyed.setdefault(mode, {})
        for side, records in sides.items():
            for record in records:
                rows.setdefault(record.query_id, {})[side] = record.model_dump(
                    mode="json", exclude={"query_id"}
                )
    return keyed


def _why(key: str, value: float) -> str:
    what = "NaN" if math.isnan(value) else "infinite"
    if key.startswith("ratio"):
        return f"{what}: a ratio over an old-side time of 0, or over no timed lookup"
    return f"{what}: computed over no value (no answerable query, or no lookup answered on a side)"


def _finite(value: Any, pointer: str, key: str, nulls: dict[str, str]) -> Any:
    """``value`` with every non-finite float as None, its pointer and reason recorded in ``nulls``."""
    if isinstance(value, float) and not math.isfinite(value):
        nulls[pointer] = _why(key, value)
        return None
    if isinstance(value, dict):
        return {
            k: _finite(v, f"{pointer}/{str(k).replace('~', '~0').replace('/', '~1')}", str(k), nulls)
            for k, v in value.items()
        }
    if isinstance(value, list):
        return [_finite(v, f"{pointer}/{i}", key, nulls) for i, v in enumerate(value)]
    return value


def upgrade_json(result: UpgradeResult) -> str:
    """The whole result as JSON text: valid JSON whatever the numbers, per-query values keyed by id."""
    data = result.model_dump(mode="json")
    data["exit_code"] = result.exit_code
    data["per_query"] = _per_query(result)
    nulls: dict[str, str] = {}
    data = _finite(data, "", "", nulls)
    data["nulls"] = nulls
    return json.dumps(data, indent=1, allow_nan=False, ensure_ascii=False) + "\n"


def latency_csv(result: UpgradeResult) -> str:
    """One line per lookup: mode, query id, side, seconds (empty when it failed), the failure."""
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(LATENCY_COLUMNS)
    for mode, sides in result.per_query.items():
        for side, records in sides.items():
            for r in records:
                seconds = "" if r.seconds is None or not math.isfinite(r.seconds) else f"{r.seconds:.6f}"
                error = visible_text(redact(r.error), one_line=True) if r.error else ""
                writer.writerow((mode, visible_text(redact(r.query_id), one_line=True), side, seconds, error))
    return out.getvalue()

"""The upgrade's files for machines: ``upgrade.json`` (always valid JSON) and ``latency.csv``.

``upgrade.json`` is everything the pages show, plus every query's values on both sides, keyed by mode
and query id (``per_query``), so anyone's tools can redo the comparison. JSON has no NaN and no
infinity (``JSON.parse`` and most readers refuse them): a number that does not exist is ``null``, and
``nulls`` says why, by the JSON Pointer of the value (RFC 6901). The file is serialized with
``allow_nan=False``, so a non-finite number that slipped past the walk is an error here rather than an
invalid file in a CI.

``latency.csv`` holds one timed lookup per line (``mode, query_id, side, round, seconds, in_sample,
error``) of every instance (``old``, ``old twin``, ``new``, ``new twin``), with the lookups that failed
and why. The latency rows are NumPy's percentiles (linear interpolation) of the lines with
``in_sample`` 1 of one mode and side: the queries answered on every instance, every round timed on
every instance. So each percentile and each ratio of ``upgrade.md`` can be recomputed from this file.
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

LATENCY_COLUMNS = ("mode", "query_id", "side", "round", "seconds", "in_sample", "error")


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


def _seconds(value: float | None) -> str:
    return "" if value is None or not math.isfinite(value) else f"{value:.6f}"


def latency_csv(result: UpgradeResult) -> str:
    """One line per timed lookup of every instance: mode, query id, side, round (0: the answer judged,
    1 on: the repeats), seconds (empty when it failed), whether it is in the latency sample, the failure."""
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(LATENCY_COLUMNS)
    for mode, sides in result.per_query.items():
        by_side = {side: {r.query_id: _times(r) for r in records} for side, records in sides.items()}
        for side, records in sides.items():
            for r in records:
                query = visible_text(redact(r.query_id), one_line=True)
                error = visible_text(redact(r.error), one_line=True) if r.error else ""
                for k, seconds in enumerate(_times(r)):
                    # In the sample: its query answered on every instance, this round timed on all.
                    sample = r.in_sample and all(
                        _timed(times.get(r.query_id, ()), k) for times in by_side.values()
                    )
                    failed = (
                        error if k == 0 else ("" if seconds is not None else "the repeated lookup failed")
                    )
                    writer.writerow((mode, query, side, k, _seconds(seconds), int(sample), failed))
    return out.getvalue()


def _times(record: Any) -> tuple[float | None, ...]:
    return (record.seconds, *record.repeats)


def _timed(times: tuple[float | None, ...], k: int) -> bool:
    return k < len(times) and times[k] is not None

"""The settings of ``rag-conformance upgrade``: the lookup both engines are asked, and the tolerances.

One TOML file (``--settings``), two tables, every key optional, unknown keys an error::

    [rag]                             # what every lookup of the evaluation asks, on both engines
    retrieve-k = 20
    return-n = 10
    max-chunks-per-document = 2
    max-l2-distance = 2.0
    highly-relevant-threshold = 0.75
    reference-threshold = 0.5
    rrf-k = 60

    [upgrade]                         # what counts as a regression (see docs/upgrade-check.md)
    alpha = 0.05
    max-metric-drop = 0.02
    max-gate-change = 0.05
    max-level-shift = 0.25
    max-latency-ratio = 2.0
    max-error-rate-increase = 0.0
    allow-uncompared-modes = false
    newly-failing-scenarios = 0

The defaults and why they are what they are:

- ``alpha`` 0.05: the usual false-alarm rate, applied to p-values adjusted for testing many metrics at
  once (Benjamini-Hochberg), so a report with 20 tests does not raise one alarm by chance in most runs.
- ``max-metric-drop`` 0.02: a ranking metric (mean over answerable queries, 0 to 1) must drop by more
  than this, and significantly, to fail the upgrade. On the bundled set's 112 answerable queries one
  query losing its answer at rank 1 moves R@1 by 0.009: 0.02 is "more than two queries' worth".
- ``max-gate-change`` 0.05: the low-quality rate and the retry rate (shares of all queries) may move by
  5 points either way; a gate firing that much more, or less, changes what users see.
- ``max-level-shift`` 0.25: the mean relevance level (NONE 0 ... PRECISE 4) may move by a quarter level.
- ``max-latency-ratio`` 2.0: the new engine's median, p95 and p99 lookup (p99 from 500 lookups) may
  take up to twice the old one's; where a second instance of the old engine ran beside them, twice the
  slower instance's (the noise two instances of one engine show on this machine is not the upgrade's).
  Only a ratio measured interleaved (both engines up at once, queries alternating) is gated: measured
  one after the other, machine load would decide it. Under 1.15, one engine against itself said
  REGRESSES in 1 of 11 runs on a loaded machine (two processes of one engine differ that much): give
  at least 1.2 where the machine is shared (docs/upgrade-check.md).
- ``max-error-rate-increase`` 0.0: the share of lookups that fail twice may not grow at all: a query
  that fails after a retry is one users see fail.
- ``allow-uncompared-modes`` false: a mode that errors left with fewer than two queries answered on
  both sides makes the check NOT JUDGED; true lets the rest of the check decide.
- ``newly-failing-scenarios`` 0: any scenario or engine check that passed and now fails is a regression.
"""

from __future__ import annotations

import tomllib
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from ..boundary._protocol import PostProcessConfig
from ._labelled import UpgradeInputError

__all__ = ["Lookup", "Tolerances", "UpgradeSettings", "load_upgrade_settings"]


class _Keys(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid", populate_by_name=True)


class Lookup(_Keys):
    """What every lookup asks; ``return-n`` 10 so that R@10 and nDCG@10 see ten blocks."""

    retrieve_k: int = Field(20, alias="retrieve-k", ge=1)
    return_n: int = Field(10, alias="return-n", ge=1)
    max_chunks_per_document: int = Field(2, alias="max-chunks-per-document", ge=1)
    max_l2_distance: float = Field(2.0, alias="max-l2-distance", gt=0)
    highly_relevant_threshold: float = Field(0.75, alias="highly-relevant-threshold", ge=0, le=1)
    reference_threshold: float = Field(0.5, alias="reference-threshold", ge=0, le=1)
    rrf_k: int = Field(60, alias="rrf-k", ge=1)

    def config(self) -> PostProcessConfig:
        return PostProcessConfig(
            max_l2_distance=self.max_l2_distance,
            highly_relevant_threshold=self.highly_relevant_threshold,
            reference_threshold=self.reference_threshold,
            return_n=self.return_n,
            max_chunks_per_document=self.max_chunks_per_document,
        )


class Tolerances(_Keys):
    alpha: float = Field(0.05, gt=0, lt=1)
    max_metric_drop: float = Field(0.02, alias="max-metric-drop", ge=0)
    max_gate_change: float = Field(0.05, alias="max-gate-change", ge=0)
    max_level_shift: float = Field(0.25, alias="max-level-shift", ge=0)
    max_latency_ratio: float = Field(2.0, alias="max-latency-ratio", gt=0)
    max_error_rate_increase: float = Field(0.0, alias="max-error-rate-increase", ge=0, le=1)
    allow_uncompared_modes: bool = Field(False, alias="allow-uncompared-modes")
    newly_failing_scenarios: int = Field(0, alias="newly-failing-scenarios", ge=0)


class UpgradeSettings(_Keys):
    rag: Lookup = Field(default_factory=Lookup)  # type: ignore[arg-type]  # every field has a default
    upgrade: Tolerances = Field(default_factory=Tolerances)  # type: ignore[arg-type]


def load_upgrade_settings(path: str | Path | None) -> UpgradeSettings:
    """The defaults, or the file's values over them; :class:`UpgradeInputError` naming a bad key."""
    if path is None:
        return UpgradeSettings()
    try:
        data: dict[str, Any] = tomllib.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        raise UpgradeInputError(f"cannot read the settings file {path}: {exc}") from None
    try:
        return UpgradeSettings.model_validate(data)
    except ValidationError as exc:
        problems = "; ".join(
            f"{'.'.join(str(p) for p in e['loc'])}: {e['msg']}" for e in exc.errors(include_url=False)
        )
        raise UpgradeInputError(f"settings file {path}: {problems}") from None

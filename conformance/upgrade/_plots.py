"""The upgrade's plots, as PNG bytes: drawn by the evaluation package's drawers (matplotlib, the
``plot`` extra), written by the caller together with the other files, atomically.

- the per-query nDCG@10 differences and the metric differences with their intervals;
- the top qualityScore of both engines side by side;
- the lookup latency of every instance per mode (the twins dashed), as distribution curves (the
  share of lookups at or under each time), where the p50 and p95 of the table can be read off and a
  tail that grew shows as a curve that bends away late.

The drawers take a path, so each is drawn into a private temporary folder and read back: nothing is
written under ``--out`` until every file of the report exists.
"""

from __future__ import annotations

import math
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import evaluation

from ._gate import UpgradeResult

__all__ = ["PLOTS", "draw_plots"]

PLOTS = {
    "deltas": "upgrade-deltas.png",
    "metrics": "upgrade-metrics.png",
    "quality": "upgrade-quality.png",
    "latency": "upgrade-latency.png",
}
_OLD, _NEW = "#59636e", "#0969da"


def _latency(path: Path, result: UpgradeResult) -> Path:
    """One panel per mode: the share of lookups that took at most x ms, old and new, x on a log scale."""
    modes = [m for m, sides in result.per_query.items() if any(r.seconds for s in sides.values() for r in s)]
    fig = evaluation.figure(5.0 * len(modes), 3.2, dpi=100)
    axes = fig.subplots(1, len(modes), squeeze=False)[0]
    for ax, mode in zip(axes, modes, strict=True):
        for side, label, color, style in (
            ("old", f"old ({result.old})", _OLD, "-"),
            ("old twin", "old twin", _OLD, "--"),
            ("new", f"new ({result.new})", _NEW, "-"),
            ("new twin", "new twin", _NEW, "--"),
        ):
            records = result.per_query[mode].get(side, ())
            ms = sorted(t * 1000 for r in records if r.in_sample for t in (r.seconds, *r.repeats) if t)
            ms = ms or sorted(r.seconds * 1000 for r in records if r.seconds)
            if ms:
                shares = [(i + 1) / len(ms) for i in range(len(ms))]
                ax.step(ms, shares, where="post", color=color, linestyle=style, label=label)
        for level in (0.5, 0.95):
            ax.axhline(level, color="#d0d7de", linewidth=0.8, linestyle=":")
        ax.set_xscale("log")
        ax.set_ylim(0, 1.02)
        ax.set_title(f"{mode}: lookup latency")
        ax.set_xlabel("ms per lookup (log scale)")
        ax.set_ylabel("share of lookups at or under")
        ax.legend(fontsize=8, loc="lower right")
    fig.savefig(path)
    return path


def _exists(*values: float | None) -> bool:
    return all(v is not None and math.isfinite(v) for v in values)


def _drawers(result: UpgradeResult) -> dict[str, Callable[[Path], Any]]:
    modes = list(result.deltas)
    drawers: dict[str, Callable[[Path], Any]] = {}
    # A metric with no value (no answerable query) has nothing to draw; its row says why.
    shown = [m for m in result.metrics if _exists(m.test.delta, m.test.ci_low, m.test.ci_high)]
    if modes:
        drawers["deltas"] = lambda p: evaluation.plot_differences(
            p, {f"{mode}: per-query nDCG@10, new - old": result.deltas[mode] for mode in modes}
        )
    if shown:
        drawers["metrics"] = lambda p: evaluation.plot_intervals(
            p,
            [f"{m.metric}\n{m.mode}" for m in shown],
            [m.test.delta for m in shown],
            [(m.test.ci_low, m.test.ci_high) for m in shown],
            flagged=[m.regressed for m in shown],
            ylabel="mean difference (new - old)",
            title="Ranking metrics: difference with 95% interval",
        )
    if modes:
        drawers["quality"] = lambda p: evaluation.plot_score_histograms(
            p,
            {
                f"{mode}: top qualityScore per query": [
                    (f"old ({result.old})", result.top_quality[mode]["old"]),
                    (f"new ({result.new})", result.top_quality[mode]["new"]),
                ]
                for mode in modes
            },
            threshold=result.settings.rag.reference_threshold,
            xlabel="qualityScore (dashed: reference threshold)",
        )
    if any(r.seconds for sides in result.per_query.values() for s in sides.values() for r in s):
        drawers["latency"] = lambda p: _latency(p, result)
    return drawers


def draw_plots(result: UpgradeResult) -> dict[str, bytes]:
    """File name -> PNG bytes of every plot the result has data for; {} without matplotlib."""
    drawers = _drawers(result)
    if not drawers or not evaluation.plotting_available():
        return {}
    drawn: dict[str, bytes] = {}
    with tempfile.TemporaryDirectory(prefix="rqs-upgrade-plots-") as scratch:
        for key, draw in drawers.items():
            path = Path(scratch) / PLOTS[key]
            draw(path)
            drawn[PLOTS[key]] = path.read_bytes()
    return drawn

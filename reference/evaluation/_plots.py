"""PNG plots of a calibration: histograms per class, the threshold sweep, and the effect of maxL2.

matplotlib is optional (the ``plot`` extra); the figures come from the evaluation package
(:func:`evaluation.figure`, ``matplotlib.figure`` without pyplot), which says what to install.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

import evaluation as _shared

from ._calibration import Calibration, CalibrationCase
from ._dataset import EvaluationError

__all__ = ["PLOT_FILES", "PlottingUnavailableError", "write_plots"]

PLOT_FILES = {
    "Top qualityScore per class": "calibration-histograms.png",
    "Threshold sweep": "calibration-sweep.png",
    "Best threshold per rag.max-l2-distance": "calibration-max-l2.png",
}
_ANSWERABLE, _UNANSWERABLE, _SUGGESTED, _CONFIGURED = "#1f77b4", "#e66100", "#1a9641", "#555555"
_TITLES = {
    "dense": "dense",
    "hybrid": "hybrid (quality from denseDistance)",
    "hybrid-rank-only": "hybrid, rank-only quality",
}


class PlottingUnavailableError(EvaluationError, _shared.PlottingUnavailableError):
    """matplotlib is not installed, so no PNG can be drawn."""


def _figure(width: float, height: float) -> Any:
    try:
        return _shared.figure(width, height, dpi=110)
    except _shared.PlottingUnavailableError as exc:
        raise PlottingUnavailableError(str(exc)) from None


def write_plots(cal: Calibration, out_dir: str | Path) -> dict[str, str]:
    """Write the three PNGs into ``out_dir``; returns caption -> file name, as in :data:`PLOT_FILES`."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    configured = cal.configured["rag.max-l2-distance"]
    at_configured = [c for c in cal.cases if c.max_l2_distance == configured]
    suggested = {s.variant: s.settings.get("rag.reference-threshold") for s in cal.suggestions}
    suggested_l2 = {s.variant: s.settings.get("rag.max-l2-distance") for s in cal.suggestions}
    # A suggestion at another maxL2 does not belong on plots drawn at the configured one.
    on_plot: dict[str, float | None] = {
        v: t for v, t in suggested.items() if suggested_l2.get(v) == configured
    }
    _histograms(cal, at_configured, on_plot, out / PLOT_FILES["Top qualityScore per class"])
    _sweeps(cal, [c for c in at_configured if c.variant != "hybrid-rank-only"], on_plot,
            out / PLOT_FILES["Threshold sweep"])  # fmt: skip
    _max_l2(cal, out / PLOT_FILES["Best threshold per rag.max-l2-distance"])
    return dict(PLOT_FILES)


def _thresholds(ax: Any, cal: Calibration, suggested: float | None) -> None:
    current = cal.configured["rag.reference-threshold"]
    ax.axvline(current, color=_CONFIGURED, linestyle="--", linewidth=1.5, label=f"configured {current:.2f}")
    if suggested is not None:
        ax.axvline(suggested, color=_SUGGESTED, linewidth=2, label=f"suggested {suggested:.2f}")


def _histograms(cal: Calibration, cases: list[CalibrationCase], suggested: Mapping[str, float | None],
                path: Path) -> None:  # fmt: skip
    fig = _figure(5.0 * len(cases), 4.2)
    axes = fig.subplots(1, len(cases), squeeze=False)[0]
    bins = [i / 20 for i in range(21)]
    for ax, case in zip(axes, cases, strict=True):
        for dist, color, name in ((case.answerable, _ANSWERABLE, "answerable"),
                                  (case.unanswerable, _UNANSWERABLE, "unanswerable")):  # fmt: skip
            values = list(dist.values)
            if values:
                weights = [1 / dist.n] * len(values)  # share of the class: the classes differ in size
                ax.hist(values, bins=bins, weights=weights, color=color, alpha=0.55, edgecolor=color,
                        linewidth=1.2, label=f"{name} (n={dist.n})")  # fmt: skip
        _thresholds(ax, cal, suggested.get(case.variant))
        if case.variant == "hybrid-rank-only":
            note = "rank 1 always maps to 1.0:\nthe top qualityScore cannot\ntell the classes apart"
            ax.text(0.5, 0.5, note, transform=ax.transAxes, ha="center", va="center", fontsize=10,
                    bbox={"facecolor": "white", "edgecolor": _CONFIGURED})  # fmt: skip
        j = case.best.scores.youden_j if case.best is not None else None
        ax.set_title(f"{_TITLES[case.variant]}\nbest J {'-' if j is None else f'{j:.2f}'}", fontsize=11)
        ax.set_xlim(0, 1.02)
        ax.set_xlabel("top qualityScore of the returned evidence")
        ax.set_ylabel("share of the class's queries")
        ax.grid(alpha=0.3)
        ax.legend(fontsize=8, loc="upper left")
    fig.suptitle(f"Top qualityScore by class, rag.max-l2-distance = {cal.configured['rag.max-l2-distance']}")
    fig.savefig(path)


def _sweeps(cal: Calibration, cases: list[CalibrationCase], suggested: Mapping[str, float | None],
            path: Path) -> None:  # fmt: skip
    fig = _figure(6.0 * len(cases), 5.0)
    axes = fig.subplots(1, len(cases), squeeze=False)[0]
    for ax, case in zip(axes, cases, strict=True):
        t = [p.threshold for p in case.sweep]

        def series(name: str, c: CalibrationCase = case) -> list[float]:
            return [float("nan") if getattr(p.scores, name) is None else getattr(p.scores, name)
                    for p in c.sweep]  # fmt: skip

        ax.plot(t, series("recall"), color=_UNANSWERABLE, label="unanswerable flagged (recall)")
        ax.plot(
            t, series("false_positive_rate"), color=_ANSWERABLE, label="answerable flagged (false alarms)"
        )
        ax.plot(t, series("precision"), color="#7b3294", linestyle=":", label="precision")
        ax.plot(t, series("f1"), color="#7b3294", label="F1")
        ax.plot(t, series("youden_j"), color="black", linewidth=2, label="Youden's J")
        _thresholds(ax, cal, suggested.get(case.variant))
        ax.set_title(_TITLES[case.variant], fontsize=11)
        ax.set_xlim(0, 1)
        ax.set_ylim(-0.02, 1.02)
        ax.set_xlabel("rag.reference-threshold (flag when top qualityScore is below it)")
        ax.grid(alpha=0.3)
    handles, labels = axes[0].get_legend_handles_labels()
    fig.legend(handles, labels, loc="outside lower center", ncols=4, fontsize=9)
    fig.suptitle("What the low-quality gate flags, per threshold")
    fig.savefig(path)


def _max_l2(cal: Calibration, path: Path) -> None:
    fig = _figure(11.0, 4.2)
    left, right = fig.subplots(1, 2)
    variants = [v for v in dict.fromkeys(c.variant for c in cal.cases) if v != "hybrid-rank-only"]
    # Hybrid gets large hollow markers: where both modes give the same value, both stay visible.
    styles = {"dense": ("#1f77b4", "o", 6, "#1f77b4"), "hybrid": ("#1a9641", "s", 11, "none")}
    for variant in variants:
        color, marker, size, face = styles.get(variant, ("black", "^", 6, "black"))
        mark = {"marker": marker, "markersize": size, "markerfacecolor": face}
        cases = [c for c in cal.cases if c.variant == variant]
        l2 = [c.max_l2_distance for c in cases]
        best_j = [c.best.scores.youden_j if c.best is not None else 0.0 for c in cases]
        now_j = [c.current.scores.youden_j or 0.0 for c in cases]
        configured = cal.configured["rag.reference-threshold"]
        left.plot(l2, best_j, color=color, label=f"{variant}, best threshold", **mark)
        left.plot(l2, now_j, color=color, linestyle="--", alpha=0.7,
                  label=f"{variant}, configured threshold {configured:.2f}", **mark)  # fmt: skip
        best_t = [c.best.threshold if c.best is not None else float("nan") for c in cases]
        right.plot(l2, best_t, color=color, label=variant, **mark)
    left.set_title("Youden's J (higher separates better)", fontsize=11)
    right.set_title("the best rag.reference-threshold", fontsize=11)
    for ax in (left, right):
        ax.set_xlabel("rag.max-l2-distance")
        ax.set_ylim(-0.02, 1.02)
        ax.grid(alpha=0.3)
        ax.legend(fontsize=8)
    fig.suptitle("Separation and the best threshold per rag.max-l2-distance")
    fig.savefig(path)

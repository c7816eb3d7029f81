"""PNG plots of evaluations: matplotlib is optional (the ``plot`` extra) and imported only here.

Through ``matplotlib.figure`` only, so no GUI backend and no global pyplot state are involved. The
drawers take plain values (per-query differences, intervals, score samples) and a path; a caller's
report decides what to draw, this module how.
"""

from __future__ import annotations

import importlib.util
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from ._errors import PlottingUnavailableError

__all__ = [
    "PLOT_EXTRA",
    "figure",
    "plot_differences",
    "plot_intervals",
    "plot_score_histograms",
    "plotting_available",
]

PLOT_EXTRA = (
    "matplotlib is not installed; install the plot extra (pip install 'rag-quality-conformance[plot]')"
)
_BLUE, _GREY, _RED = "#0969da", "#59636e", "#cf222e"


def plotting_available() -> bool:
    """Whether matplotlib can be imported (checked without importing it)."""
    return importlib.util.find_spec("matplotlib") is not None


def figure(width: float, height: float, *, dpi: int = 110) -> Any:
    """A new matplotlib Figure (constrained layout); :class:`PlottingUnavailableError` without matplotlib."""
    try:
        from matplotlib.figure import Figure
    except ImportError:
        raise PlottingUnavailableError(PLOT_EXTRA + " or pass --no-plots") from None
    return Figure(figsize=(width, height), dpi=dpi, layout="constrained")


def plot_differences(
    path: Path, panels: Mapping[str, Sequence[float]], *, xlabel: str = "difference"
) -> Path:
    """One histogram per panel (title -> per-query differences in [-1, 1]), a line at 0."""
    fig = figure(5.0 * len(panels), 3.2, dpi=100)
    axes = fig.subplots(1, len(panels), squeeze=False)[0]
    for ax, (title, values) in zip(axes, panels.items(), strict=True):
        ax.hist(list(values), bins=21, range=(-1, 1), color=_BLUE)
        ax.axvline(0, color=_GREY, linewidth=1)
        ax.set_title(title)
        ax.set_xlabel(xlabel)
        ax.set_ylabel("queries")
    fig.savefig(path)
    return path


def plot_intervals(
    path: Path,
    labels: Sequence[str],
    values: Sequence[float],
    intervals: Sequence[tuple[float, float]],
    *,
    flagged: Sequence[bool],
    ylabel: str,
    title: str,
) -> Path:
    """A bar per label with its interval as error bars; flagged bars in red, a line at 0."""
    fig = figure(8.0, 3.4, dpi=100)
    ax = fig.subplots()
    low = [v - lo for v, (lo, _) in zip(values, intervals, strict=True)]
    high = [hi - v for v, (_, hi) in zip(values, intervals, strict=True)]
    colors = [_RED if f else _BLUE for f in flagged]
    ax.bar(range(len(labels)), list(values), yerr=[low, high], color=colors, capsize=3)
    ax.axhline(0, color=_GREY, linewidth=1)
    ax.set_xticks(range(len(labels)), list(labels), fontsize=8)
    ax.set_ylabel(ylabel)
    ax.set_title(title)
    fig.savefig(path)
    return path


def plot_score_histograms(
    path: Path,
    panels: Mapping[str, Sequence[tuple[str, Sequence[float]]]],
    *,
    threshold: float,
    xlabel: str,
) -> Path:
    """Per panel (title -> (name, scores in [0, 1]) pairs; names may repeat) the samples side by side."""
    fig = figure(5.0 * len(panels), 3.2, dpi=100)
    axes = fig.subplots(1, len(panels), squeeze=False)[0]
    for ax, (title, samples) in zip(axes, panels.items(), strict=True):
        ax.hist(
            [list(values) for _, values in samples],
            bins=20,
            range=(0, 1),
            label=[name for name, _ in samples],
            color=[_GREY, _BLUE][: len(samples)],
        )
        ax.axvline(threshold, color=_RED, linewidth=1, linestyle="--")
        ax.set_title(title)
        ax.set_xlabel(xlabel)
        ax.legend(fontsize=8)
    fig.savefig(path)
    return path

"""``results.json`` -> the targets table and ``RESULTS.md``. Pure formatting: no measuring here."""

from __future__ import annotations

from typing import Any

from benchmarks._targets import (
    CONFORMANCE_S,
    PEER_MARGIN,
    PIPELINE_SIZE,
    PIPELINE_TARGET,
    POSTPROCESS_US,
    lookup_target,
)
from benchmarks.rendering import peers as peer_section
from benchmarks.rendering import sections

__all__ = ["checks", "render_markdown"]


def _row(
    figure: str, value: float, target: float | None, unit: str, *, applies: bool = True, why: str = ""
) -> dict[str, Any]:
    """One checked figure; ``target`` is ``None`` where no budget is set (shown as "-", never met)."""
    suffix = "x" if unit == "x" else f" {unit}"
    shown = f"{value:.3f}x" if unit == "x" else f"{value:,.1f} {unit}"
    verdict = f"n/a ({why})"
    if target is not None and applies:
        verdict = "met" if value <= target else "MISSED"
    return {
        "figure": figure,
        "value": value,
        "measured": shown,
        "target": "-" if target is None else f"<= {target:g}{suffix}",
        "target_value": target,
        "verdict": verdict,
    }


def _not_run(figure: str, why: str) -> dict[str, Any]:
    return {"figure": figure, "value": None, "measured": "-", "target": "-", "verdict": f"not run: {why}"}


def checks(results: dict[str, Any]) -> list[dict[str, Any]]:
    """One row per figure that has a target: measured value, target, verdict."""
    rows = []
    for r in results["retrieval"]:
        where = f"{r['engine']} {r['size']:,}"
        if "not_run" in r:
            rows.append(_not_run(f"1, 2. query figures ({where})", r["not_run"]))
            continue
        target = lookup_target(r["engine"], r["size"])
        rows.append(
            _row(
                f"1. lookup / bare hybrid_search p50 ({where})",
                r["lookup_vs_bare"]["p50"],
                target,
                "x",
                why="no budget for this engine and size",
            )
        )
    for r in results["retrieval"]:
        where = f"{r['engine']} {r['size']:,}"
        if "not_run" in r:
            continue
        rows.append(
            _row(
                f"2. reference / legacy pipeline p50 ({where})",
                r["reference_vs_legacy"]["p50"],
                PIPELINE_TARGET,
                "x",
                applies=r["size"] >= PIPELINE_SIZE,
                why="target is for 100k",
            )
        )
    rows += _peer_checks(results["retrieval"])
    per_call = results["post_process"]["us_per_call"]
    for size, target in POSTPROCESS_US.items():
        if size in per_call:
            rows.append(_row(f"3. post_process, {size} candidates", per_call[size], target, "us"))
    conf = results["conformance"]
    whole = " -k " not in conf["command"]
    rows.append(
        _row(
            f"4. `{conf['command']}` wall",
            conf["wall_s"],
            CONFORMANCE_S,
            "s",
            applies=whole,
            why="a selection",
        )
    )
    return rows


def _peer_checks(runs: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The reference's lookup / bare within a point (:data:`PEER_MARGIN`) of each peer's peer / bare,
    same engine and size: the guide's "within a point of the fastest peer"."""
    rows = []
    for r in runs:
        for peer in r.get("peers", []):
            where = f"{r['engine']} {r['size']:,}"
            figure = f"1b. reference lookup / bare within a point of {peer['library']}'s ({where})"
            if "not_run" in peer:
                rows.append(_not_run(figure, peer["not_run"]))
                continue
            target = round(peer["peer_vs_bare"]["p50"] + PEER_MARGIN, 4)
            rows.append(_row(figure, r["lookup_vs_bare"]["p50"], target, "x"))
    return rows


def render_markdown(results: dict[str, Any]) -> str:
    """The whole report as Markdown."""
    m = results["machine"]
    engines = ", ".join(
        sorted({f"{r['engine']} {r['engine_version']}" for r in results["retrieval"] if "not_run" not in r})
    )
    packages = ", ".join(f"{k} {v}" for k, v in m["packages"].items() if v)
    target_rows = [[c["figure"], c["measured"], c["target"], c["verdict"]] for c in results["checks"]]
    out = [
        "# Benchmarks",
        "",
        f"Produced by `{results['command']}` (from the repository root) on {results['started_at']}, "
        f"{results['total_seconds']:.0f} s, at git {m.get('git_commit')}. "
        "`python -m benchmarks render` rewrites this file from `results.json`.",
        "",
        f"Machine: {m['cores']} cores ({m['usable_cores']} usable), {m['cpu']}, {m['memory_gb']} GB RAM, "
        f"{m['os']}, Python {m['python']}; engine {engines}; {packages}. Load average (1, 5, 15 min) "
        f"{m['load_average_start']} at the start, {m.get('load_average_end')} at the end: the machine is "
        "shared and noisy, so absolute times are context only. The ratios come from variants measured "
        "side by side, interleaved, in this one run."
        + (f" Also running on the machine: {note}" if (note := results["config"].get("note")) else ""),
        "",
        "## Targets",
        "",
        sections.table(["figure", "measured", "target", "verdict"], target_rows),
        "",
    ]
    out += sections.method(results["config"])
    out += sections.side_by_side(results["retrieval"])
    out += sections.client_time(results["retrieval"])
    out += sections.stages(results["retrieval"])
    out += peer_section.peers(results["retrieval"])
    out += sections.retrieval(results["retrieval"])
    out += sections.post_process(results["post_process"])
    out += sections.conformance(results["conformance"])
    out += sections.ingest(results["retrieval"])
    out += sections.stdio(results["stdio"])
    found = [
        (f"{r['engine']} {r['size']:,}: `{name}`", p)
        for r in results["retrieval"]
        for name, p in r.get("profiles", {}).items()
    ]
    if "profile" in results["post_process"]:
        found.append(("post_process, 100 candidates", results["post_process"]["profile"]))
    if "profile" in results["conformance"]:
        found.append(
            (
                "rag-conformance run (the kit's process; the engine is another)",
                results["conformance"]["profile"],
            )
        )
    out += sections.profiles(found)
    return "\n".join(out).rstrip() + "\n"

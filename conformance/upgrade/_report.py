"""The reports of ``rag-conformance upgrade``: one page per upgrade, in Markdown and HTML, and JSON.

Both pages are rendered from one list of sections (a heading, sentences, a table, images), so they
cannot disagree. The HTML page uses the docs site's skeleton and stylesheet (:mod:`conformance.site`).
The plots (the evaluation package's drawers; matplotlib, the ``plot`` extra) are where people look
rather than read: the per-query nDCG@10 differences, the metric differences with their intervals, and
the top qualityScore of both engines side by side. Without matplotlib the pages say so and show the
tables alone.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

import evaluation
from evaluation import PairedTest

from ..boundary._redact import redact
from ..site._html_parts import esc
from ..site._templates import CSS, PAGE
from ._gate import UpgradeResult

__all__ = ["write_reports"]

PLOTS = {"deltas": "upgrade-deltas.png", "metrics": "upgrade-metrics.png", "quality": "upgrade-quality.png"}


@dataclass
class _Section:
    title: str
    lines: list[str] = field(default_factory=list)
    header: Sequence[str] = ()
    rows: list[Sequence[str]] = field(default_factory=list)
    images: list[tuple[str, str]] = field(default_factory=list)  # (file, alt)


def _f(value: float | None, digits: int = 3) -> str:
    return "-" if value is None else f"{value:.{digits}f}"


def _test_row(mode: str, name: str, x: PairedTest, regressed: bool, *, d_z: bool) -> tuple[str, ...]:
    """One paired test as a table row: means, difference, interval, (d_z,) p, q and the finding."""
    effect = (_f(x.d_z, 2),) if d_z else ()
    return (
        mode,
        name,
        _f(x.old_mean),
        _f(x.new_mean),
        f"{x.delta:+.3f}",
        f"{x.ci_low:+.3f} .. {x.ci_high:+.3f}",
        *effect,
        _f(x.p_value, 4),
        _f(x.q_value, 4),
        "REGRESSION" if regressed else "",
    )


def _sections(r: UpgradeResult, images: dict[str, str]) -> list[_Section]:
    old, new = r.old, r.new
    verdict = _Section("Verdict")
    verdict.lines.append(
        f"**{r.verdict}** (exit code {r.exit_code}): {old} ({r.old_version}) to {new} ({r.new_version}), "
        f"adapter {r.adapter}, labelled set {r.labelled_set} "
        f"({r.queries} queries, {r.answerable} answerable)."
    )
    verdict.lines += [f"Regression: {line}" for line in r.regressions] or [
        "Nothing regresses beyond the tolerances."
    ]
    verdict.lines += [f"Not compared: {line}" for line in r.not_compared]
    t = r.settings.upgrade
    verdict.lines.append(
        f"Tolerances: alpha {t.alpha:g} (Benjamini-Hochberg adjusted), metric drop {t.max_metric_drop:g}, "
        f"gate change {t.max_gate_change:g}, level shift {t.max_level_shift:g}, latency ratio "
        f"{t.max_latency_ratio:g}, newly failing scenarios {t.newly_failing_scenarios}."
    )
    sections = [verdict]

    suite = _Section("Conformance suite and engine checks, by scenario id")
    if not r.suite.compared:
        suite.lines.append(f"Not compared: {r.suite.why_not}")
    else:
        suite.lines.append(f"Verdicts: {old} {r.suite.old_verdict}, {new} {r.suite.new_verdict}.")
        suite.header = ("change", "scenario", old, new, "the engine's message")
        groups = (
            ("newly failing", r.suite.newly_failing),
            ("newly passing", r.suite.newly_passing),
            ("newly not applicable", r.suite.newly_not_applicable),
            ("other", r.suite.other),
        )
        for name, rows in groups:
            for s in rows:
                # The new engine's word when it has one (why it fails), else the old one's (why it did).
                text = s.get("message") or (f"on {old}: {s['old_message']}" if s.get("old_message") else "")
                message = text.strip().splitlines()
                # An expected failure is a divergence the kit knows for this engine (expectations/*.toml).
                kind = "known divergence" if s["new"] == "xfailed" else name
                suite.rows.append(
                    (kind, s["id"], s["old"] or "absent", s["new"] or "absent", message[0] if message else "")
                )
        if not suite.rows:
            suite.lines.append("Every scenario has the same status on both engines.")
    sections.append(suite)

    quality = _Section("Retrieval quality, per mode (paired over queries)")
    quality.lines.append(
        "Means over the answerable queries; difference = new - old with its 95% bootstrap interval; "
        "p from a paired randomization test, q adjusted for all tests of this page."
    )
    quality.header = ("mode", "metric", old, new, "difference", "95% CI", "d_z", "p", "q", "")
    quality.rows += [_test_row(m.mode, m.metric, m.test, m.regressed, d_z=True) for m in r.metrics]
    quality.images += [
        (images[k], a)
        for k, a in (
            ("metrics", "metric differences with 95% intervals"),
            ("deltas", "per-query nDCG@10 differences"),
        )
        if k in images
    ]
    sections.append(quality)

    movers = _Section("The queries that changed most (nDCG@10)")
    movers.header = ("mode", "query", "text", old, new, "difference")
    movers.rows = [(m.mode, m.query_id, m.query, _f(m.old), _f(m.new), f"{m.delta:+.3f}") for m in r.movers]
    if not movers.rows:
        movers.lines.append("No query's nDCG@10 changed.")
    sections.append(movers)

    gates = _Section("The gates, per mode (paired over all queries)")
    gates.header = ("mode", "gate", old, new, "difference", "95% CI", "p", "q", "")
    gates.rows += [_test_row(g.mode, g.gate, g.test, g.regressed, d_z=False) for g in r.gates]
    for g in r.gates:
        if g.old_counts or g.new_counts:
            levels = ", ".join(
                f"{k} {g.old_counts.get(k, 0)} -> {g.new_counts.get(k, 0)}"
                for k in sorted(g.old_counts.keys() | g.new_counts.keys())
            )
            gates.lines.append(f"Relevance levels ({g.mode}, {old} -> {new}): {levels}.")
    if "quality" in images:
        gates.images.append((images["quality"], "top qualityScore of both engines"))
    sections.append(gates)

    latency = _Section("Lookup latency")
    latency.header = (
        "mode",
        f"{old} p50 ms",
        f"{old} p95 ms",
        f"{new} p50 ms",
        f"{new} p95 ms",
        "ratio p50",
        "ratio p95",
        "interleaved",
        "",
    )
    for lat in r.latency:
        latency.rows.append(
            (
                lat.mode,
                _f(lat.old_p50 * 1000, 1),
                _f(lat.old_p95 * 1000, 1),
                _f(lat.new_p50 * 1000, 1),
                _f(lat.new_p95 * 1000, 1),
                _f(lat.ratio_p50, 2),
                _f(lat.ratio_p95, 2),
                "yes" if lat.interleaved else "no",
                "REGRESSION" if lat.regressed else "",
            )
        )
    latency.lines.append(
        "One timed lookup per query and mode on each engine, in the same process, after a short warm-up; "
        "interleaved means both engines were up at once and the order alternated at random per query."
    )
    sections.append(latency)
    return sections


def _markdown(r: UpgradeResult, sections: Sequence[_Section]) -> str:
    out = [f"# Upgrade check: {r.old} to {r.new}", ""]
    for s in sections:
        out += [f"## {s.title}", ""]
        out += [line for text in s.lines for line in (f"- {text}" if s.title == "Verdict" else text, "")]
        if s.rows:
            cells = lambda row: "| " + " | ".join(str(c).replace("|", "\\|") for c in row) + " |"  # noqa: E731
            out += [cells(s.header), "|" + "---|" * len(s.header), *(cells(row) for row in s.rows), ""]
        out += [f"![{alt}]({file})" for file, alt in s.images] + ([""] if s.images else [])
    return "\n".join(out).rstrip() + "\n"


def _html(r: UpgradeResult, sections: Sequence[_Section]) -> str:
    parts = [f"<h1>Upgrade check: {esc(r.old)} to {esc(r.new)}</h1>"]
    css = {"SAFE": "s-conforms", "REGRESSES": "s-does-not-conform", "NOT JUDGED": "s-not-judged"}[r.verdict]
    parts.append(f'<p class="lead"><span class="status {css}">{esc(r.verdict)}</span></p>')
    for s in sections:
        parts.append(f"<h2>{esc(s.title)}</h2>")
        parts += [f"<p>{esc(text).replace('**', '')}</p>" for text in s.lines]
        if s.rows:
            head = "".join(f"<th>{esc(h)}</th>" for h in s.header)
            body = "".join("<tr>" + "".join(f"<td>{esc(c)}</td>" for c in row) + "</tr>" for row in s.rows)
            parts.append(f"<table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>")
        parts += [
            f'<p><img src="{esc(file)}" alt="{esc(alt)}" style="max-width:100%"></p>'
            for file, alt in s.images
        ]
    return PAGE.substitute(
        title=esc(f"Upgrade check: {r.old} to {r.new}"),
        css=CSS,
        site="rag-retrieval-quality-score",
        crumb=' <span class="crumb">/ upgrade check</span>',
        body="\n".join(parts),
        footer=esc(f"rag-conformance upgrade; verdict {r.verdict}; data in upgrade.json"),
    )


def _plots(r: UpgradeResult, out: Path) -> dict[str, str]:
    """The three PNGs, drawn by the evaluation package; none without matplotlib or without a mode."""
    modes = list(r.deltas)
    if not modes or not evaluation.plotting_available():
        return {}
    evaluation.plot_differences(
        out / PLOTS["deltas"], {f"{mode}: per-query nDCG@10, new - old": r.deltas[mode] for mode in modes}
    )
    evaluation.plot_intervals(
        out / PLOTS["metrics"],
        [f"{m.metric}\n{m.mode}" for m in r.metrics],
        [m.test.delta for m in r.metrics],
        [(m.test.ci_low, m.test.ci_high) for m in r.metrics],
        flagged=[m.regressed for m in r.metrics],
        ylabel="mean difference (new - old)",
        title="Ranking metrics: difference with 95% interval",
    )
    evaluation.plot_score_histograms(
        out / PLOTS["quality"],
        {
            f"{mode}: top qualityScore per query": [
                (r.old, r.top_quality[mode]["old"]),
                (r.new, r.top_quality[mode]["new"]),
            ]
            for mode in modes
        },
        threshold=r.settings.rag.reference_threshold,
        xlabel="qualityScore (dashed: reference threshold)",
    )
    return dict(PLOTS)


def write_reports(result: UpgradeResult, out: Path, *, plots: bool = True) -> list[Path]:
    """Write upgrade.json, upgrade.md, upgrade.html and the plots into ``out``; return the paths."""
    out.mkdir(parents=True, exist_ok=True)
    images = _plots(result, out) if plots else {}
    sections = _sections(result, images)
    if plots and not images and result.deltas:
        sections[0].lines.append(f"No plots: {evaluation.PLOT_EXTRA}.")
    data = result.model_dump(mode="json")
    data["exit_code"] = result.exit_code
    paths = [out / "upgrade.json", out / "upgrade.md", out / "upgrade.html"]
    # An engine's or an adapter's message may quote its endpoint: every page passes through redact().
    paths[0].write_text(redact(json.dumps(data, indent=1)) + "\n", encoding="utf-8")
    paths[1].write_text(redact(_markdown(result, sections)), encoding="utf-8")
    paths[2].write_text(redact(_html(result, sections)), encoding="utf-8")
    return paths + [out / name for name in images.values()]

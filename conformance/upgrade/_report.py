"""The reports of ``rag-conformance upgrade``: one page per upgrade in Markdown and HTML, the data,
the plots and the runs, all written at once.

Both pages are rendered from one list of sections (a heading, sentences, a table, images), so they
cannot disagree. The sections hold plain text: engine and implementation names, query text and
messages come from outside the kit, so each renderer escapes all of it for its format. Markdown as
the docs site does (HTML escaped, since GitHub renders raw HTML; ``|`` escaped in cells) and every
character that opens Markdown markup (emphasis, code, links) backslash-escaped, control characters
made visible (:func:`~conformance.boundary.visible_text`); HTML through the site's :func:`esc`. The
HTML page uses the site's skeleton and stylesheet and carries its plots inside (``data:`` URIs), so it
can be mailed or uploaded alone. Without matplotlib the pages say so and show the tables alone.

Every file (``upgrade.json``, ``upgrade.md``, ``upgrade.html``, ``latency.csv``, the PNGs, ``runs/``)
is written by :func:`write_reports` in one :func:`~conformance.boundary.write_all_atomically`: a full
disk or an unwritable file leaves the earlier report whole and is one
:class:`~conformance.boundary.OutputNotWrittenError` naming the path and the errno.
"""

from __future__ import annotations

import base64
import contextlib
import html
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import evaluation
from evaluation import PairedTest

from ..boundary._atomic import OutputNotWrittenError, write_all_atomically
from ..boundary._redact import redact
from ..boundary._visible import visible_text
from ..site._html_parts import esc
from ..site._templates import CSS, PAGE
from ._data import latency_csv, upgrade_json
from ._gate import UpgradeResult
from ._latency import P99_MIN
from ._plots import PLOTS, draw_plots
from ._runs import RUNS_DIR
from ._sides import MODES

__all__ = ["PLOTS", "md_text", "write_reports"]

# What opens Markdown markup inline: emphasis, code, links and images, strikethrough, a cell border,
# and the backslash itself. The HTML characters are escaped as HTML (GitHub renders raw HTML).
_MARKDOWN_ACTIVE = re.compile(r"([\\`*_\[\]|~])")
Line = str | tuple[str, str]  # plain text, or (text shown strong, the rest)
_PLOT_SLOT = "rqs-plot:%s"  # an image's src until the page is redacted; then its data: URI


def md_text(text: object) -> str:
    """``text`` as Markdown that shows exactly it: no markup, no HTML, no control character, one line."""
    # Redacted before it is escaped: an escaped secret ("tok\\_en") would no longer match the redactor.
    shown = visible_text(redact(str(text)), one_line=True)
    return html.escape(_MARKDOWN_ACTIVE.sub(r"\\\1", shown), quote=False)


def _esc(text: object) -> str:
    """The site's HTML escaping, of the redacted text (as :func:`md_text`, for the same reason)."""
    return esc(redact(str(text)))


@dataclass
class _Section:
    title: str
    lines: list[Line] = field(default_factory=list)
    header: Sequence[str] = ()
    rows: list[Sequence[str]] = field(default_factory=list)
    images: list[tuple[str, str]] = field(default_factory=list)  # (file, alt)


def _f(value: float | None, digits: int = 3) -> str:
    return "-" if value is None or value != value else f"{value:.{digits}f}"


def _d(value: float | None) -> str:
    return "-" if value is None or value != value else f"{value:+.3f}"


def _ms(seconds: float | None) -> str:
    return _f(None if seconds is None else seconds * 1000, 1)


def _test_row(mode: str, name: str, x: PairedTest, regressed: bool, *, d_z: bool) -> tuple[str, ...]:
    """One paired test as a table row: means, difference, interval, (d_z,) p, q and the finding."""
    effect = (_f(x.d_z, 2),) if d_z else ()
    return (
        mode,
        name,
        _f(x.old_mean),
        _f(x.new_mean),
        _d(x.delta),
        f"{_d(x.ci_low)} .. {_d(x.ci_high)}",
        *effect,
        _f(x.p_value, 4),
        _f(x.q_value, 4),
        "REGRESSION" if regressed else "",
    )


def side_labels(r: UpgradeResult) -> tuple[str, str]:
    """The column names of the two sides: "old (lite)" and "new (lite)", never "lite" and "lite"."""
    return f"old ({r.old})", f"new ({r.new})"


def _sections(r: UpgradeResult, images: dict[str, str]) -> list[_Section]:
    old, new = side_labels(r)
    verdict = _Section("Verdict")
    verdict.lines.append(
        (
            r.verdict,
            f" (exit code {r.exit_code}): {r.old} ({r.old_version}) to {r.new} ({r.new_version}), "
            f"adapter {r.adapter}, labelled set {r.labelled_set} "
            f"({r.queries} queries, {r.answerable} answerable).",
        )
    )
    verdict.lines += [f"Regression: {line}" for line in r.regressions] or [
        "Nothing regresses beyond the tolerances."
    ]
    verdict.lines += [f"Not compared: {line}" for line in r.not_compared]
    verdict.lines += [f"Sensitivity: {line}" for line in r.sensitivity]
    verdict.lines += [f"Warning: {line}" for line in r.warnings]
    t = r.settings.upgrade
    verdict.lines.append(
        f"Tolerances: alpha {t.alpha:g} (Benjamini-Hochberg adjusted), metric drop {t.max_metric_drop:g}, "
        f"gate change {t.max_gate_change:g}, level shift {t.max_level_shift:g}, latency ratio "
        f"{t.max_latency_ratio:g} (p50, p95, p99), error-rate increase {t.max_error_rate_increase:g}, "
        f"newly failing scenarios {t.newly_failing_scenarios}."
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
                text = s.get("message") or (f"on {r.old}: {s['old_message']}" if s.get("old_message") else "")
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
        "Means over the answerable queries both engines answered; difference = new - old with its "
        "two-sided 95% bootstrap interval (its size); p from a one-sided paired randomization test (did "
        "it drop?), q adjusted for all tests of this page; detectable: the smallest drop this set finds "
        f"at alpha {t.alpha:g} with 80% power (a random share of queries losing their answer)."
    )
    quality.header = ("mode", "metric", old, new, "difference", "95% CI", "d_z", "p", "q", "", "detectable")
    quality.rows += [
        (*_test_row(m.mode, m.metric, m.test, m.regressed, d_z=True), _f(m.detectable_drop))
        for m in r.metrics
    ]
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
    movers.rows = [(m.mode, m.query_id, m.query, _f(m.old), _f(m.new), _d(m.delta)) for m in r.movers]
    if not movers.rows:
        movers.lines.append("No query's nDCG@10 changed.")
    sections.append(movers)

    gates = _Section("The gates, per mode (paired over all queries)")
    gates.header = ("mode", "gate", old, new, "difference", "95% CI", "p", "q", "")
    gates.rows += [_test_row(g.mode, g.gate, g.test, g.regressed, d_z=False) for g in r.gates]
    for g in r.gates:
        if g.gate == "error rate" and (g.old_counts.get("failed") or g.new_counts.get("failed")):
            gates.lines.append(
                f"Lookups that failed twice ({g.mode}): {g.old_counts['failed']} of {g.old_counts['asked']} "
                f"-> {g.new_counts['failed']} of {g.new_counts['asked']}; they leave the other rows."
            )
        elif g.gate.startswith("relevance") and (g.old_counts or g.new_counts):
            levels = ", ".join(
                f"{k} {g.old_counts.get(k, 0)} -> {g.new_counts.get(k, 0)}"
                for k in sorted(g.old_counts.keys() | g.new_counts.keys())
            )
            gates.lines.append(f"Relevance levels ({g.mode}, old -> new): {levels}.")
    if "quality" in images:
        gates.images.append((images["quality"], "top qualityScore of both engines"))
    sections.append(gates)

    sections.append(_latency_section(r, images))
    return sections


def _ms2(seconds: float | None) -> str:
    """Milliseconds with enough digits to recompute a ratio from the page: 2 decimals, 3 under 1 ms."""
    if seconds is None or seconds != seconds:
        return "-"
    return f"{seconds * 1000:.{3 if seconds < 0.001 else 2}f}"


NO_TWINS = (
    "The ratio is new over old: no second instance of the engines could run beside them (an engine on "
    "fixed ports starts once), so what two processes of one engine differ by is in it too."
)


def _latency_section(r: UpgradeResult, images: dict[str, str]) -> _Section:
    """Every instance's percentiles, the gated pair marked, the ratio beside the two numbers it divides."""
    old, new = side_labels(r)
    latency = _Section("Lookup latency")
    twins = any(lat.twin_old_p50 is not None or lat.twin_new_p50 is not None for lat in r.latency)
    instances = ("old", "old twin", "new", "new twin") if twins else ("old", "new")
    shown = {"old": f"{old} ms", "new": f"{new} ms", "old twin": "old twin ms", "new twin": "new twin ms"}
    latency.header = (
        "mode",
        "percentile",
        *(shown[i] for i in instances),
        "ratio (gated new / gated old)",
        "q",
        "lookups per instance",
        "interleaved",
        "",
    )
    for lat in r.latency:
        for name in ("p50", "p95", "p99"):
            new_instance, _, old_instance, _ = lat.pair(name)
            gated = {new_instance, old_instance}
            cells = [
                _ms2(lat.value(i, name))
                + (" (gated)" if i in gated and lat.value(i, name) is not None else "")
                for i in instances
            ]
            latency.rows.append(
                (
                    lat.mode,
                    name,
                    *cells,
                    _f(getattr(lat, f"ratio_{name}"), 2),
                    _f(lat.q_values.get(name), 4),
                    str(lat.lookups),
                    "yes" if lat.interleaved else "no",
                    "REGRESSION" if name in lat.regressed_at else "",
                )
            )
    rounds = sorted({lat.rounds for lat in r.latency})
    latency.lines.append(
        f"Each query was timed {' or '.join(map(str, rounds)) or '1'} times per mode on each instance, in "
        "the same process, after a short warm-up (the first lookup is the answer judged above, the repeats "
        "are timed only); interleaved means the instances were up at once and their order changed at "
        f"random per query. A p99 needs {P99_MIN} lookups per instance (-: fewer); q is the one-sided "
        "test's, adjusted over every latency test."
    )
    if twins:
        latency.lines.append(
            "Old twin and new twin are a second instance of each engine, run beside the first two: at each "
            "percentile the ratio is the faster new instance over the slower old one, the two cells marked "
            "(gated), so a regression is called only when both new instances are slower than both old ones."
        )
    else:
        latency.lines.append(NO_TWINS)
    latency.lines.append(
        "Every figure can be recomputed from latency.csv: NumPy's percentile (linear interpolation) of the "
        "seconds of one mode and side over the lines with in_sample 1 (the queries answered on every "
        "instance, the rounds timed on all)."
    )
    latency.lines += [f"Noise ({lat.mode}): {lat.noise}" for lat in r.latency if lat.noise]
    if "latency" in images:
        latency.images.append((images["latency"], "lookup latency of every instance, per mode"))
    return latency


def _md_line(line: Line) -> str:
    if isinstance(line, tuple):
        return f"**{md_text(line[0])}**{md_text(line[1])}"
    return md_text(line)


def _markdown(r: UpgradeResult, sections: Sequence[_Section]) -> str:
    out = [f"# Upgrade check: {md_text(r.old)} to {md_text(r.new)}", ""]
    for s in sections:
        out += [f"## {md_text(s.title)}", ""]
        out += [
            text for line in s.lines for text in (("- " if s.title == "Verdict" else "") + _md_line(line), "")
        ]
        if s.rows:
            cells = lambda row: "| " + " | ".join(md_text(c) for c in row) + " |"  # noqa: E731
            out += [cells(s.header), "|" + "---|" * len(s.header), *(cells(row) for row in s.rows), ""]
        out += [f"![{md_text(alt)}]({file})" for file, alt in s.images] + ([""] if s.images else [])
    return "\n".join(out).rstrip() + "\n"


def _html_line(line: Line) -> str:
    if isinstance(line, tuple):
        return f"<strong>{_esc(line[0])}</strong>{_esc(line[1])}"
    return _esc(line)


def _data_uri(png: bytes) -> str:
    return "data:image/png;base64," + base64.b64encode(png).decode("ascii")


def _with_plots(page: str, pngs: Mapping[str, bytes]) -> str:
    """The page with its plots filled in, after the redactor has read the text: base64 is not text, and
    a short secret could match inside it by chance and break the image."""
    for name, png in pngs.items():
        page = page.replace(_PLOT_SLOT % name, _data_uri(png))
    return page


def _html(r: UpgradeResult, sections: Sequence[_Section]) -> str:
    parts = [f"<h1>Upgrade check: {_esc(r.old)} to {_esc(r.new)}</h1>"]
    css = {"SAFE": "s-conforms", "REGRESSES": "s-does-not-conform", "NOT JUDGED": "s-not-judged"}[r.verdict]
    parts.append(f'<p class="lead"><span class="status {css}">{_esc(r.verdict)}</span></p>')
    for s in sections:
        parts.append(f"<h2>{_esc(s.title)}</h2>")
        parts += [f"<p>{_html_line(line)}</p>" for line in s.lines]
        if s.rows:
            head = "".join(f"<th>{_esc(h)}</th>" for h in s.header)
            body = "".join("<tr>" + "".join(f"<td>{_esc(c)}</td>" for c in row) + "</tr>" for row in s.rows)
            parts.append(f"<table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>")
        # The page carries its plots: an HTML report is often opened alone (a CI artifact, a mail).
        parts += [
            f'<p><img src="{_PLOT_SLOT % file}" alt="{_esc(alt)}" style="max-width:100%"></p>'
            for file, alt in s.images
        ]
    return PAGE.substitute(
        title=_esc(f"Upgrade check: {r.old} to {r.new}"),
        css=CSS,
        site="rag-retrieval-quality-score",
        crumb=' <span class="crumb">/ upgrade check</span>',
        body="\n".join(parts),
        footer=_esc(f"rag-conformance upgrade; verdict {r.verdict}; data in upgrade.json, latency.csv"),
    )


def write_reports(
    result: UpgradeResult, out: Path, *, plots: bool = True, runs: Mapping[str, str] | None = None
) -> list[Path]:
    """Write upgrade.json, upgrade.md, upgrade.html, latency.csv, the plots and ``runs`` (path under
    ``out`` -> text) into ``out``, all or none (atomically); return the paths."""
    pngs = draw_plots(result) if plots else {}
    images = {key: name for key, name in PLOTS.items() if name in pngs}
    sections = _sections(result, images)
    if plots and not pngs and result.deltas:
        sections[0].lines.append(f"No plots: {evaluation.PLOT_EXTRA}.")
    # An engine's or an adapter's message may quote its endpoint or token: every text passes redact().
    files: dict[str | Path, str | bytes] = {
        out / "upgrade.json": redact(upgrade_json(result)),
        out / "upgrade.md": redact(_markdown(result, sections)),
        out / "upgrade.html": _with_plots(redact(_html(result, sections)), pngs),
        out / "latency.csv": redact(latency_csv(result)),
    }
    files |= {out / name: png for name, png in pngs.items()}
    files |= {out / name: redact(text) for name, text in (runs or {}).items()}
    for directory in dict.fromkeys(Path(path).parent for path in files):
        try:
            directory.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise OutputNotWrittenError(directory, exc.errno, exc.strerror or str(exc)) from exc
    written = write_all_atomically(files)
    _remove_stale(out, written)
    return written


def _remove_stale(out: Path, written: list[Path]) -> None:
    """Remove the kit's own files that an earlier run wrote here and this one did not (a plot under
    ``--no-plots``, the run of a mode that did not run this time): read beside this report, they would
    pass for its own. Only after every new file is in place, and only names this check writes."""
    ours = {out / name for name in PLOTS.values()}
    ours |= {out / RUNS_DIR / f"{side}-{mode}.run" for side in ("old", "new") for mode in MODES}
    for stale in ours - set(written):
        with contextlib.suppress(OSError):
            stale.unlink(missing_ok=True)

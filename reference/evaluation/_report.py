"""Markdown for the evaluation and calibration reports (the JSON is the models themselves)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence

from evaluation import GAIN_CONVENTION, BinaryScores, measure_names

from ._calibration import Calibration, CalibrationCase, Distribution, SweepPoint
from ._run import EvalRun
from ._summary import EvalSummary
from ._trec import RUN_FILES, ir_measures_command

__all__ = ["calibration_markdown", "evaluation_markdown", "toml_float"]

_VARIANT_NAMES = {
    "dense": "dense",
    "hybrid": "hybrid (quality from denseDistance)",
    "hybrid-rank-only": "hybrid without denseDistance (rank-only quality)",
}


def toml_float(value: float) -> str:
    """A TOML float (``2.0``, ``0.39``): ``2`` would be an integer there."""
    text = f"{value:g}"
    return text if any(c in text for c in ".e") else text + ".0"


def _num(value: float | None, digits: int = 3) -> str:
    return "-" if value is None else f"{value:.{digits}f}"


def _table(header: Sequence[str], rows: Iterable[Sequence[object]]) -> list[str]:
    lines = ["| " + " | ".join(header) + " |", "|" + "|".join("---" for _ in header) + "|"]
    lines += ["| " + " | ".join(str(cell) for cell in row) + " |" for row in rows]
    return [*lines, ""]


def _about(run: EvalRun) -> list[str]:
    s = run.settings
    answerable = sum(1 for o in run.outcomes if o.answerable)
    return [
        f"- embedder: {run.embedder}",
        f"- engine: {run.engine or 'not recorded'}",
        f"- corpus: {run.corpus.path} ({run.corpus.rows} chunks, {len(run.categories)} categories, "
        f"sha256 {run.corpus.sha256[:12]})",
        f"- queries: {run.queries.path} ({run.queries.rows} queries: {answerable} answerable, "
        f"{run.queries.rows - answerable} unanswerable; sha256 {run.queries.sha256[:12]})",
        *(
            [f"- qrels: {run.qrels.path} ({run.qrels.rows} relevant, sha256 {run.qrels.sha256[:12]})"]
            if run.qrels is not None
            else []
        ),
        f"- set: {run.layout}",
        *(f"- warning about the set: {w}" for w in run.warnings),
        f"- settings: retrieve-k {s['rag.retrieve-k']}, return-n {s['rag.return-n']}, "
        f"max-chunks-per-document {s['rag.max-chunks-per-document']}, max-l2-distance "
        f"{s['rag.max-l2-distance']}, reference-threshold {s['rag.reference-threshold']}, "
        f"highly-relevant-threshold {s['rag.highly-relevant-threshold']}, "
        f"rrf-k {s['retrieval.search.rrf-k']}",
        f"- run: {run.created}, reference {run.version}; ingest {run.seconds.get('ingest', 0):.1f} s, "
        f"queries {run.seconds.get('queries', 0):.1f} s",
        "",
    ]


def evaluation_markdown(run: EvalRun, summary: EvalSummary) -> str:
    """The evaluation report: every table of ``summary`` with one line on how to read it."""
    out = ["# Retrieval evaluation", "", *_about(run)]
    names = measure_names(run.ks)
    out += [
        "## Ranking",
        "",
        "Answerable queries only, over the candidates of the attempt `lookup_knowledge` used "
        f"(up to rag.retrieve-k = {run.settings['rag.retrieve-k']}, retrieval order). Grades: 1 related, "
        "2 answers, 3 best answer. Computed by trec_eval's implementation (ir_measures, pytrec_eval "
        "provider): R@k is recall_k, nDCG@k is ndcg_cut_k, RR is recip_rank (its mean is the MRR). "
        f"{GAIN_CONVENTION}.",
        "",
        "The run and qrels files beside this report reproduce the table with the field's tools: "
        f"`{ir_measures_command(run.modes[0], names)}` prints the {run.modes[0]} row"
        + (f" ({RUN_FILES[run.modes[1]]} the {run.modes[1]} one)." if len(run.modes) > 1 else "."),
        "",
    ]
    out += _table(
        ["mode", "queries", *names],
        (
            [r.mode, r.queries, *(_num(r.metrics[n]) for n in names)]
            for r in summary.ranking
            if r.group == "all"
        ),
    )
    k = max((k for k in run.ks if k <= 5), default=run.ks[0])
    out += [f"### By kind of query (R@{k} and RR)", ""]
    groups = list(dict.fromkeys(r.group for r in summary.ranking if r.group != "all"))
    by = {(r.mode, r.group): r for r in summary.ranking}
    header = ["kind", "queries"] + [f"{m} R@{k}" for m in run.modes] + [f"{m} RR" for m in run.modes]
    rows = []
    for g in groups:
        first = by[(run.modes[0], g)]
        rows.append(
            [g, first.queries]
            + [_num(by[(m, g)].metrics[f"R@{k}"]) for m in run.modes]
            + [_num(by[(m, g)].metrics["RR"]) for m in run.modes]
        )
    out += _table(header, rows)
    out += [
        "## Category retry",
        "",
        "Queries that name a category search it first; a low-quality result retries once without the "
        "filter. helped / same / hurt compare nDCG@return-n over the accepted evidence of the filtered "
        "attempt and of the retry (answerable queries). 'answer elsewhere' counts queries whose labelled "
        "chunks all lie outside the category asked; 'missed' are those of them with no retry and no labelled "
        "chunk in the evidence.",
        "",
    ]
    out += _table(
        ["mode", "with category", "retry ran", "on unanswerable", "on answerable", "helped", "same", "hurt",
         "answer elsewhere", "of them retried", "missed"],
        ([r.mode, r.with_category, r.retried, r.retried_unanswerable, r.retried_answerable, r.helped, r.same,
          r.hurt, r.answer_elsewhere, r.answer_elsewhere_retried, r.missed] for r in summary.retry),
    )  # fmt: skip
    out += [
        "## The low-quality gate as a classifier",
        "",
        "`isLowQuality` of the returned result, read as 'this query has no answer in the corpus'. "
        "Positive class: unanswerable. Precision: flagged queries that are unanswerable; recall: "
        "unanswerable queries flagged; false alarms: answerable queries flagged; Youden's J = recall - "
        "false-alarm rate.",
        "",
    ]
    out += _table(
        ["mode", "threshold", "TP", "FP", "FN", "TN", "precision", "recall", "F1", "false alarms", "J"],
        (_gate_cells(g.mode, g.threshold, g.scores) for g in summary.gates),
    )
    out += ["## Relevance levels", ""]
    levels = list(next(iter(summary.levels.values()))["answerable"])
    out += _table(
        ["mode", "class", *levels],
        (
            [m, cls, *(summary.levels[m][cls][lv] for lv in levels)]
            for m in run.modes
            for cls in summary.levels[m]
        ),
    )
    out += [
        "## Label check",
        "",
        f"Unfiltered dense top {run.label_check_depth} against BM25-only top {run.label_check_depth}, for "
        "the best-graded chunks. A paraphrase is as labelled when only dense finds it, an exact token "
        "when only BM25 does.",
        "",
    ]
    out += _table(
        ["kind", "queries", "dense only", "BM25 only", "both", "neither", "as labelled", "exceptions"],
        ([r.kind, r.queries, r.dense_only, r.bm25_only, r.both, r.neither,
          "-" if r.as_labelled is None else f"{r.as_labelled}/{r.queries}", ", ".join(r.exceptions) or "-"]
         for r in summary.label_check),
    )  # fmt: skip
    out += ["## Answerable queries whose evidence holds no labelled chunk", ""]
    text = {o.id: o.query for o in run.outcomes}
    for mode in run.modes:
        missed = summary.misses[mode]
        listed = "; ".join(f"{q} ({text[q]})" for q in missed) or "none"
        out += [f"- {mode} ({len(missed)}): {listed}"]
    return "\n".join([*out, ""])


def _gate_cells(mode: str, threshold: float, s: BinaryScores) -> list[object]:
    return [mode, _num(threshold, 2), s.tp, s.fp, s.fn, s.tn, _num(s.precision), _num(s.recall), _num(s.f1),
            _num(s.false_positive_rate), _num(s.youden_j)]  # fmt: skip


def calibration_markdown(cal: Calibration, images: Mapping[str, str] | None = None) -> str:
    """The calibration report; ``images`` maps a caption to a PNG file name written beside it."""
    configured = cal.configured["rag.max-l2-distance"]
    out = [
        "# Threshold calibration",
        "",
        f"- embedder: {cal.embedder}",
        f"- from the evaluation run of {cal.created}: {cal.queries} queries ({cal.answerable} answerable, "
        f"{cal.unanswerable} unanswerable)",
        f"- configured: rag.max-l2-distance {configured}, rag.reference-threshold "
        f"{cal.configured['rag.reference-threshold']}, rag.highly-relevant-threshold "
        f"{cal.configured['rag.highly-relevant-threshold']}",
        f"- criterion: {cal.criterion}",
        "- the top qualityScore of each query is recomputed over the evidence the run returned; the "
        "lookup path (filtered or retried) stays as it ran",
        "",
        "## Suggested settings",
        "",
    ]
    for s in cal.suggestions:
        out += [f"### {_VARIANT_NAMES[s.variant]}", ""]
        if not s.settings:
            out += [f"No suggestion: {s.note}.", ""]
            continue
        assert s.best is not None
        out += ["```toml", *(f"{key} = {toml_float(value)}" for key, value in s.settings.items()), "```", ""]
        out += [
            f"At the suggested threshold: {_point_words(s.best)}. At the configured one: "
            f"{_point_words(s.current)}. {s.note[0].upper()}{s.note[1:]}.",
            "",
        ]
    for img_caption, name in (images or {}).items():
        out += [f"![{img_caption}]({name})", ""]
    out += [f"## Top qualityScore per class (rag.max-l2-distance = {configured})", ""]
    rows = []
    for case in cal.cases:
        if case.max_l2_distance == configured:
            rows += [_dist_cells(case.variant, "answerable", case.answerable)]
            rows += [_dist_cells(case.variant, "unanswerable", case.unanswerable)]
    out += _table(["variant", "class", "n", "no evidence", "min", "p10", "median", "p90", "max"], rows)
    out += [
        "## Per rag.max-l2-distance",
        "",
        "For unit vectors, squared L2 d = 2 - 2 cos and quality = max(0, 1 - d / maxL2): threshold t "
        "flags d > maxL2 (1 - t). As long as maxL2 is above the distances that matter, maxL2 and the "
        "threshold are one knob; a small maxL2 clamps many qualities to 0 and loses that resolution.",
        "",
    ]
    out += _table(
        ["variant", "maxL2", "best threshold", "J", "precision", "recall", "F1", "J at configured threshold"],
        (_case_cells(c) for c in cal.cases if c.variant != "hybrid-rank-only"),
    )
    out += ["## Threshold sweep", "", f"rag.max-l2-distance = {configured}, every 0.05.", ""]
    cases = [c for c in cal.cases if c.max_l2_distance == configured and c.variant != "hybrid-rank-only"]
    header = ["threshold"] + [
        f"{c.variant} {name}" for c in cases for name in ("precision", "recall", "F1", "J")
    ]
    sweep_rows = []
    for i, point in enumerate(cases[0].sweep):
        if round(point.threshold * 100) % 5:
            continue
        cells: list[object] = [_num(point.threshold, 2)]
        for c in cases:
            sc = c.sweep[i].scores
            cells += [_num(sc.precision), _num(sc.recall), _num(sc.f1), _num(sc.youden_j)]
        sweep_rows.append(cells)
    out += _table(header, sweep_rows)
    return "\n".join(out)


def _point_words(p: SweepPoint) -> str:
    s = p.scores
    return (
        f"threshold {p.threshold:.2f} flags {s.tp} of {s.tp + s.fn} unanswerable and {s.fp} of {s.fp + s.tn} "
        f"answerable queries (precision {_num(s.precision)}, recall {_num(s.recall)}, F1 {_num(s.f1)}, "
        f"J {_num(s.youden_j)})"
    )


def _dist_cells(variant: str, cls: str, d: Distribution) -> list[object]:
    return [variant, cls, d.n, d.no_evidence, _num(d.minimum), _num(d.p10), _num(d.median), _num(d.p90),
            _num(d.maximum)]  # fmt: skip


def _case_cells(c: CalibrationCase) -> list[object]:
    b = c.best
    if b is None:
        return [
            c.variant,
            f"{c.max_l2_distance:g}",
            "none",
            "-",
            "-",
            "-",
            "-",
            _num(c.current.scores.youden_j),
        ]
    s = b.scores
    return [c.variant, f"{c.max_l2_distance:g}", _num(b.threshold, 2), _num(s.youden_j), _num(s.precision),
            _num(s.recall), _num(s.f1), _num(c.current.scores.youden_j)]  # fmt: skip

"""What the upgrade writes, without an engine (issue 42 item 5, issue 45's upgrade leftovers):
per-query data keyed by query id, always-valid JSON, a latency CSV and plot, pages that show the text
they quote instead of obeying it, an HTML page that carries its plots, run files trec_eval reads.

The results are the gate's own (:func:`conformance.upgrade.compare` on planted evaluations), with the
per-query records, the hostile text or the missing numbers written in where the test needs them.
"""

from __future__ import annotations

import csv
import io
import json
import math
from pathlib import Path
from typing import Any

import ir_measures
import pytest
from markdown_it import MarkdownIt

from conformance.boundary._redact import register_secret
from conformance.upgrade import (
    EngineEvaluation,
    Outcome,
    SuiteChanges,
    UpgradeResult,
    compare,
    load_labelled_set,
    load_upgrade_settings,
)
from conformance.upgrade._data import latency_csv, upgrade_json
from conformance.upgrade._gate import QueryRecord
from conformance.upgrade._plots import draw_plots
from conformance.upgrade._report import md_text, write_reports
from conformance.upgrade._runs import run_files, trec_id

LABELLED = load_labelled_set(None, limit=6)
HOSTILE = "<img src=x onerror=alert(1)> **loud** [click](http://evil.example) `code` a|b \x1b[2J\x07 _x_"


def _evaluation(engine: str, seconds: float = 0.01) -> EngineEvaluation:
    e = EngineEvaluation(engine, version=engine)
    for mode in ("dense", "hybrid"):
        e.outcomes[mode] = [
            Outcome(q.id, tuple(q.relevant)[:1], 0.6, False, "RELEVANT", "unfiltered", seconds * (i + 1))
            for i, q in enumerate(LABELLED.queries)
        ]
    return e


def _result(old: str = "lite", new: str = "lite", **update: Any) -> UpgradeResult:
    result = compare(
        LABELLED,
        _evaluation(old),
        _evaluation(new, seconds=0.012),
        SuiteChanges(compared=False, why_not="skipped (--no-suite)"),
        load_upgrade_settings(None),
        adapter="reference",
        interleaved=True,
        old_label=old,
        new_label=new,
    )
    return result.model_copy(update=update)


def _records(failing: str | None = None) -> dict[str, dict[str, list[QueryRecord]]]:
    """Per-query records as the gate fills them; ``failing``'s lookup errored on the new side."""

    def side(scale: float, errored: str | None) -> list[QueryRecord]:
        return [
            QueryRecord(query_id=q.id, error="RuntimeError: boom")
            if q.id == errored
            else QueryRecord(
                query_id=q.id,
                metrics={"nDCG@10": 1.0 / (i + 1)} if q.relevant else {},
                seconds=scale * (i + 1),
            )
            for i, q in enumerate(LABELLED.queries)
        ]

    return {mode: {"old": side(0.010, None), "new": side(0.013, failing)} for mode in ("dense", "hybrid")}


def _strict(text: str) -> Any:
    """JSON as a strict reader (JSON.parse) takes it: NaN and Infinity are not JSON."""

    def refuse(constant: str) -> Any:
        raise ValueError(f"{constant} is not JSON")

    return json.loads(text, parse_constant=refuse)


# -- upgrade.json and latency.csv ------------------------------------------------------------------------


def test_upgrade_json_holds_every_querys_values_of_both_sides_keyed_by_query_id() -> None:
    failing = LABELLED.queries[2].id
    data = _strict(upgrade_json(_result(per_query=_records(failing))))
    dense = data["per_query"]["dense"]
    assert list(dense) == [q.id for q in LABELLED.queries]  # keyed by id, in the set's order
    first = LABELLED.queries[0]
    assert dense[first.id]["old"] == {
        "metrics": {"nDCG@10": 1.0},
        "seconds": 0.01,
        "error": None,
        "repeats": [],
        "in_sample": False,
    }
    assert dense[first.id]["new"]["seconds"] == pytest.approx(0.013)
    assert dense[failing]["new"] | {"repeats": [], "in_sample": False} == dense[failing]["new"]
    assert (dense[failing]["new"]["seconds"], dense[failing]["new"]["error"]) == (None, "RuntimeError: boom")


def test_a_number_that_does_not_exist_is_null_with_its_reason_and_the_file_stays_json() -> None:
    result = _result()
    nan_row = result.metrics[0].model_copy(
        update={"test": result.metrics[0].test.model_copy(update={"old_mean": math.nan, "d_z": math.nan})}
    )
    lat = result.latency[0].model_copy(update={"ratio_p50": math.inf})
    text = upgrade_json(
        result.model_copy(update={"metrics": [nan_row, *result.metrics[1:]], "latency": [lat]})
    )
    data = _strict(text)  # NaN or Infinity anywhere would raise here
    assert data["metrics"][0]["test"]["old_mean"] is None
    assert data["latency"][0]["ratio_p50"] is None
    assert "no answerable query" in data["nulls"]["/metrics/0/test/old_mean"]
    assert "ratio" in data["nulls"]["/latency/0/ratio_p50"]
    assert set(data["nulls"]) == {"/metrics/0/test/old_mean", "/metrics/0/test/d_z", "/latency/0/ratio_p50"}


def test_latency_csv_has_one_line_per_lookup_with_its_failure() -> None:
    failing = LABELLED.queries[1].id
    result = _result(per_query=_records(failing))
    rows = list(csv.DictReader(io.StringIO(latency_csv(result))))
    assert len(rows) == 2 * 2 * len(LABELLED.queries)  # modes x sides x queries
    assert set(rows[0]) == {"mode", "query_id", "side", "round", "seconds", "in_sample", "error"}
    [errored] = [r for r in rows if r["error"] and r["mode"] == "dense"]
    assert (errored["query_id"], errored["side"], errored["seconds"]) == (failing, "new", "")
    timed = [float(r["seconds"]) for r in rows if r["mode"] == "hybrid" and r["side"] == "old"]
    assert timed == pytest.approx([0.01 * (i + 1) for i in range(len(LABELLED.queries))])


def test_the_latency_plot_is_drawn_from_the_per_query_times() -> None:
    assert "upgrade-latency.png" not in draw_plots(_result(per_query={}))  # no per-query times: nothing
    pngs = draw_plots(_result(per_query=_records()))
    assert pngs["upgrade-latency.png"].startswith(b"\x89PNG\r\n\x1a\n")


# -- the pages --------------------------------------------------------------------------------------------


def _rendered(markdown: str) -> list[Any]:
    return list(MarkdownIt("commonmark").enable("table").enable("strikethrough").parse(markdown))


def _all_tokens(tokens: list[Any]) -> list[Any]:
    return [t for token in tokens for t in [token, *(token.children or [])]]


def test_markdown_shows_quoted_text_as_text_never_as_markup() -> None:
    shown = md_text(HOSTILE)
    tokens = _all_tokens(_rendered(f"| a |\n|---|\n| {shown} |\n\n{shown}\n"))
    kinds = {t.type for t in tokens}
    assert not kinds & {"html_inline", "html_block", "strong_open", "em_open", "link_open", "code_inline"}
    assert not kinds & {"s_open"}
    texts = "".join(t.content for t in tokens if t.type == "text")
    assert "<img src=x onerror=alert(1)>" in texts  # the reader sees what the implementation said
    assert "**loud** [click](http://evil.example) `code` a|b" in texts
    assert "\x1b" not in shown
    assert "\\x1b[2J\\x07" in texts


def test_upgrade_md_escapes_names_queries_and_messages(tmp_path: Path) -> None:
    result = _result(old=HOSTILE, new="lite")
    mover = result.model_dump()["movers"]
    movers = [
        {"mode": "dense", "query_id": "q1", "query": HOSTILE, "old": 1.0, "new": 0.0, "delta": -1.0},
        *mover,
    ]
    result = UpgradeResult.model_validate(
        {**result.model_dump(), "movers": movers, "regressions": [f"prepare failed: {HOSTILE}"]}
    )
    write_reports(result, tmp_path, plots=False)
    page = (tmp_path / "upgrade.md").read_text()
    tokens = _all_tokens(_rendered(page))
    assert not {t.type for t in tokens} & {"html_inline", "html_block", "link_open", "code_inline"}
    strong = [t for t in tokens if t.type == "strong_open"]
    assert len(strong) == 1  # the verdict's own, nothing from quoted text
    assert "\x1b" not in page
    assert "\x07" not in page
    html = (tmp_path / "upgrade.html").read_text()
    assert "<img src=x" not in html
    assert "&lt;img src=x onerror=alert(1)&gt;" in html


def test_the_same_engine_on_both_sides_is_labelled_old_and_new(tmp_path: Path) -> None:
    write_reports(_result(), tmp_path, plots=False)
    page = (tmp_path / "upgrade.md").read_text()
    assert "| lite | lite |" not in page
    assert "| mode | metric | old (lite) | new (lite) |" in page
    assert "| mode | percentile | old (lite) ms | new (lite) ms |" in page


def test_the_html_page_carries_its_plots(tmp_path: Path) -> None:
    written = write_reports(_result(per_query=_records()), tmp_path)
    html = (tmp_path / "upgrade.html").read_text()
    pngs = sorted(p.name for p in written if p.suffix == ".png")
    assert pngs == ["upgrade-deltas.png", "upgrade-latency.png", "upgrade-metrics.png", "upgrade-quality.png"]
    assert html.count('<img src="data:image/png;base64,') == len(pngs)
    assert not any(f'src="{name}"' in html for name in pngs)  # never a link that breaks when moved alone
    assert (
        "![lookup latency of every instance, per mode](upgrade-latency.png)"
        in (tmp_path / "upgrade.md").read_text()
    )


# -- the run files -----------------------------------------------------------------------------------------


def test_run_files_redact_echoed_secrets_and_encode_ids_trec_eval_could_not_split(tmp_path: Path) -> None:
    register_secret("Ech0edT0ken-42")
    weird = ("doc with space#0", "leak-Ech0edT0ken-42#0", "", "tab\there#1", "100%#0")
    evaluations = {"old": _evaluation("lite"), "new": _evaluation("lite")}
    first = LABELLED.queries[0]
    new = evaluations["new"].outcomes["dense"]
    new[0] = Outcome(first.id, (*new[0].ranking, *weird), 0.6, False, "RELEVANT", "unfiltered", 0.01)
    files = run_files(LABELLED, evaluations)
    written = write_reports(_result(), tmp_path, plots=False, runs=files)
    assert tmp_path / "runs" / "new-dense.run" in written
    text = (tmp_path / "runs" / "new-dense.run").read_text()
    assert "Ech0edT0ken" not in text
    assert all(len(line.split()) == 6 for line in text.splitlines())  # qid Q0 docid rank score tag
    run = {
        (r.query_id, r.doc_id) for r in ir_measures.read_trec_run(str(tmp_path / "runs" / "new-dense.run"))
    }
    encoded = {
        (first.id, d) for d in ("doc%20with%20space#0", "leak-***#0", "%22%22", "tab%09here#1", "100%#0")
    }
    assert encoded <= run
    qrels = list(ir_measures.read_trec_qrels(str(tmp_path / "runs" / "qrels.txt")))
    measured = ir_measures.calc_aggregate(
        [ir_measures.nDCG @ 10], qrels, ir_measures.read_trec_run(str(tmp_path / "runs" / "new-dense.run"))
    )
    assert 0 < measured[ir_measures.nDCG @ 10] <= 1  # trec_eval's measures read the files as written


def test_a_trec_id_that_is_already_a_token_is_left_as_it_is() -> None:
    assert trec_id("doc-7#3") == "doc-7#3"
    assert trec_id("naïve#0") == "naïve#0"


def test_the_latency_table_shows_p99_where_it_exists_and_the_noise_in_words(tmp_path: Path) -> None:
    result = _result()
    dense, hybrid = result.latency
    rows = [
        dense.model_copy(
            update={"old_p99": 0.020, "new_p99": 0.030, "ratio_p99": 1.5, "noise": "A/A: 1.04x"}
        ),
        hybrid,  # too few lookups for a p99: None, shown as "-"
    ]
    write_reports(result.model_copy(update={"latency": rows}), tmp_path, plots=False)
    page = (tmp_path / "upgrade.md").read_text()
    assert "| mode | percentile | old (lite) ms | new (lite) ms | ratio (gated new / gated old) |" in page
    rows_shown = {
        tuple(line.split(" | ")[:2]): line for line in page.splitlines() if line.endswith("| yes |  |")
    }
    assert "| 20.00 (gated) | 30.00 (gated) | 1.50 |" in rows_shown[("| dense", "p99")]
    # Too few lookups: no p99 on either side, no ratio, no q.
    assert rows_shown[("| hybrid", "p99")].split(" | ")[2:6] == ["-", "-", "-", "-"]
    assert "Noise (dense): A/A: 1.04x" in page


def test_warnings_are_on_the_page_and_in_the_terminal_summary(tmp_path: Path) -> None:
    from conformance.commands._upgrade import _summary

    result = _result(warnings=["queries.jsonl:3: query q3 has no qrel; it counts as unanswerable"])
    write_reports(result, tmp_path, plots=False)
    assert "- Warning: queries.jsonl:3: query q3 has no qrel" in (tmp_path / "upgrade.md").read_text()
    lines = _summary(result, [])
    assert "warning: queries.jsonl:3: query q3 has no qrel; it counts as unanswerable" in lines


def test_an_embedded_plot_survives_a_secret_that_its_base64_happens_to_hold(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import base64

    from conformance.upgrade import _report

    encoded = "iVBORw0KGgoAS3cr3tPl0tAA"  # a PNG's signature, then the secret, in base64
    monkeypatch.setattr(
        _report, "draw_plots", lambda result: {"upgrade-deltas.png": base64.b64decode(encoded)}
    )
    register_secret("S3cr3tPl0t")
    write_reports(_result(), tmp_path)
    html = (tmp_path / "upgrade.html").read_text()
    assert f'src="data:image/png;base64,{encoded}"' in html  # the image as drawn, not redacted into "***"


def test_numbers_that_do_not_exist_render_as_a_dash_on_every_output(tmp_path: Path) -> None:
    from conformance.commands._upgrade import _summary

    result = _result()
    empty = result.metrics[3].test.model_copy(update={"delta": math.nan, "ci_low": None, "q_value": None})
    metrics = [*result.metrics[:3], result.metrics[3].model_copy(update={"test": empty}), *result.metrics[4:]]
    latency = [result.latency[0].model_copy(update={"old_p50": None, "ratio_p50": None}), result.latency[1]]
    missing = result.model_copy(update={"metrics": metrics, "latency": latency})
    written = {p.name for p in write_reports(missing, tmp_path)}
    assert {"upgrade-metrics.png", "upgrade-deltas.png"} <= written  # drawn without the missing bar
    _strict((tmp_path / "upgrade.json").read_text())
    [ndcg] = [line for line in _summary(missing, []) if "dense nDCG@10" in line]
    assert "(-, 95% CI -.." in ndcg
    assert "q -)" in ndcg
    [dense] = [line for line in _summary(missing, []) if "dense latency" in line]
    assert dense.startswith(" dense latency p50 -, p95 ")


def test_a_new_report_leaves_no_file_of_an_earlier_one_that_would_pass_for_its_own(tmp_path: Path) -> None:
    both = {"old": _evaluation("lite"), "new": _evaluation("lite")}
    first = write_reports(_result(per_query=_records()), tmp_path, runs=run_files(LABELLED, both))
    assert tmp_path / "upgrade-latency.png" in first
    assert tmp_path / "runs" / "new-hybrid.run" in first
    del both["new"].outcomes["hybrid"]  # hybrid did not run on the new engine this time
    second = write_reports(_result(), tmp_path, plots=False, runs=run_files(LABELLED, both))
    left = {p for p in tmp_path.rglob("*") if p.is_file()}
    assert left == set(second)
    assert not (tmp_path / "runs" / "new-hybrid.run").exists()


def test_a_secret_the_pages_would_escape_is_redacted_before_it_is_escaped(tmp_path: Path) -> None:
    secret = "s3cr_et*<Tok>&en"
    register_secret(secret)
    result = _result(regressions=[f"prepare failed: auth {secret} refused"])
    write_reports(result, tmp_path, plots=False)
    for page in ("upgrade.md", "upgrade.html", "upgrade.json"):
        text = (tmp_path / page).read_text()
        assert "s3cr" not in text, page  # neither as written nor in any escaped form
        assert "auth *** refused" in text or "auth \\*\\*\\* refused" in text, page

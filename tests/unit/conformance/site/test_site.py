"""``rag-conformance docs`` on the two recorded reports (one implementation, two engines) and edited copies.

No kit run and no browser here: the recorded reports are data. The browser test is test_docs_browser.py.
"""

from __future__ import annotations

import html
import json
import re
from pathlib import Path

import pytest

from conformance.commands._cli import main
from conformance.reporting import Report, build_report
from conformance.site import DocsError, badge, build_site
from conformance.spec._paths import features_dir

DATA = Path(__file__).resolve().parents[3] / "data" / "recorded"
LITE3 = DATA / "lite-3.2.2.json"
LITE25 = DATA / "lite-2.5.1.json"
HOSTILE = '<script>alert(1)</script> | ```fence``` & "quotes"'


def _report(path: Path) -> Report:
    return Report.model_validate_json(path.read_bytes())


def _text(markup: str) -> str:
    """What a reader sees: tags dropped, entities decoded."""
    return html.unescape(re.sub(r"<[^>]+>", " ", markup))


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("site")
    build_site([LITE3, LITE25], out)
    return out


def test_one_page_per_requirement_in_html_and_markdown(site: Path) -> None:
    stems = {p.stem for p in site.glob("*.html")} - {"index", "readings"}
    requirement_ids = {
        line.split("@req:")[1].split()[0]
        for path in features_dir().rglob("*.feature")
        for line in path.read_text(encoding="utf-8").splitlines()
        if "@req:" in line
    }
    assert stems == requirement_ids
    assert {p.stem for p in site.glob("*.md")} == stems | {"README", "readings"}


def test_the_readings_page_is_part_of_the_site(site: Path) -> None:
    page = (site / "readings.html").read_text(encoding="utf-8")
    assert "<h2>12. PRECISE at the threshold</h2>" in page
    assert "<code>dense-only</code>" in page
    assert 'href="readings.html"' in (site / "index.html").read_text(encoding="utf-8")


def test_the_index_names_both_engines_when_one_implementation_ran_on_two(site: Path) -> None:
    index = (site / "index.html").read_text(encoding="utf-8")
    assert "reference (lite milvus_lite-3.2.2)" in index
    assert "reference (uri milvus_lite-2.5.1)" in index
    text = _text(index)
    assert "Engine checks" in text
    assert "DOES NOT CONFORM" in text
    assert "12/12 judged, 7 passed, 5 failed" in text  # the spec scenarios, as the table counts them
    assert "12/12 judged, 12 passed" in text
    assert "every capability: 12 of 12 spec scenarios judged" in text  # what the verdict judged


def test_every_link_of_the_index_exists_and_nothing_is_fetched(site: Path) -> None:
    for page in site.glob("*.html"):
        markup = page.read_text(encoding="utf-8")
        assert "<script" not in markup
        assert "<link" not in markup
        assert " src=" not in markup
        assert "http://" not in markup
        assert "https://" not in markup
    for href in re.findall(r'href="([^"#]+)"', (site / "index.html").read_text(encoding="utf-8")):
        assert (site / href).is_file(), href


def test_a_requirement_page_shows_spec_text_gherkin_and_the_error_message(site: Path) -> None:
    page = (site / "dense-baseline.html").read_text(encoding="utf-8")
    errored = next(s for s in _report(LITE25).scenarios if s.id == "mode-dense-still-callable")
    assert errored.status == "errored"
    assert errored.message
    text = _text(page)
    assert errored.message in text
    assert "retrieval.search.mode=dense" in text  # the requirement's prose from the pinned spec
    assert '<span class="kw">When</span>' in page
    assert 'id="mode-dense-still-callable"' in page
    assert '<span class="tag spec">@spec:' in page


def test_tables_render_as_tables(site: Path) -> None:
    page = (site / "quality-gates.html").read_text(encoding="utf-8")
    assert "<th>threshold</th>" in page  # an Examples header
    assert "<td>The warranty covers parts for two years.</td>" in page  # a step's data table
    assert "<var>&lt;threshold&gt;</var>" in page  # an outline parameter in a step


def test_badges_count_spec_scenarios_and_turn_red_on_failure(site: Path) -> None:
    badges = {p.name: json.loads(p.read_text()) for p in (site / "badges").iterdir()}
    # One implementation on two engines: the engine (backend and version) tells the badges apart.
    assert sorted(badges) == ["reference-lite-milvus_lite-3.2.2.json", "reference-uri-milvus_lite-2.5.1.json"]
    assert badges["reference-lite-milvus_lite-3.2.2.json"] == {
        "schemaVersion": 1,
        "label": "conformance",
        "message": "12/12 passed",
        "color": "brightgreen",
    }
    # The derived scenarios that errored are counted apart, as the verdict counts them.
    assert (
        badges["reference-uri-milvus_lite-2.5.1.json"]["message"]
        == "7/12 passed, 5 failed, 4 derived errored"
    )
    assert badges["reference-uri-milvus_lite-2.5.1.json"]["color"] == "red"


def test_a_partial_implementation_without_failures_is_yellow_and_says_what_was_not_judged() -> None:
    report = _report(LITE3)
    # As if it declared no search: the scenarios of R6 (both need search) are not applicable.
    scenarios = [
        s.model_copy(update={"status": "not_applicable", "needs": ("search",)})
        if s.requirement_id == "dense-baseline"
        else s
        for s in report.scenarios
    ]
    partial = build_report(
        scenarios, report.environment, requirement_order=[r.requirement for r in report.requirements]
    )
    assert badge(partial) == {
        "schemaVersion": 1,
        "label": "conformance",
        "message": "11/12 passed, 1 not judged",
        "color": "yellow",
    }
    assert (
        partial.verdict_text == "CONFORMS (every capability: 11 of 12 spec scenarios judged; R6 not judged)"
    )


def test_report_text_is_escaped_everywhere(tmp_path: Path) -> None:
    data = json.loads(LITE25.read_text(encoding="utf-8"))
    target = next(s for s in data["scenarios"] if s["id"] == "mode-dense-still-callable")
    target["message"] = HOSTILE
    data["environment"]["adapter"]["name"] = "<b>evil|name</b>"
    hostile = tmp_path / "hostile.json"
    hostile.write_text(json.dumps(data), encoding="utf-8")
    out = tmp_path / "site"
    build_site([hostile], out)
    for page in out.glob("*.html"):
        markup = page.read_text(encoding="utf-8")
        assert "<script>" not in markup
        assert "<b>evil" not in markup
    assert html.escape(HOSTILE, quote=True) in (out / "dense-baseline.html").read_text(encoding="utf-8")
    markdown = (out / "dense-baseline.md").read_text(encoding="utf-8")
    assert "````text" in markdown  # a fence longer than the ``` inside the message
    # Inside a fenced block the message is code, not markup: GitHub shows it as text.
    assert f"  ````text\n  {HOSTILE}\n  ````" in markdown
    assert "&lt;b&gt;evil\\|name&lt;/b&gt;" in (out / "README.md").read_text(encoding="utf-8")


def test_the_docs_command_writes_the_site(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "site"
    assert main(["docs", "--results", str(LITE3), "--results", str(LITE25), "--out", str(out)]) == 0
    assert str(out / "index.html") in capsys.readouterr().out
    assert (out / "README.md").is_file()


def test_the_docs_command_names_an_unreadable_report(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    bad = tmp_path / "report.json"
    bad.write_text('{"scenarios": []}', encoding="utf-8")
    assert main(["docs", "--results", str(tmp_path), "--out", str(tmp_path / "site")]) == 2
    err = capsys.readouterr().err
    assert str(bad) in err
    assert "not a conformance report" in err


def test_no_reports_is_an_error(tmp_path: Path) -> None:
    with pytest.raises(DocsError, match="--results"):
        build_site([], tmp_path)


def test_results_no_page_shows_and_another_spec_text_are_warned_about(tmp_path: Path) -> None:
    data = json.loads(LITE3.read_text(encoding="utf-8"))
    data["scenarios"][0]["id"] = "a-scenario-from-another-kit"
    data["environment"]["spec_sha256"] = "0" * 64
    other = tmp_path / "other.json"
    other.write_text(json.dumps(data), encoding="utf-8")
    site = build_site([other], tmp_path / "site")
    text = " ".join(_text(site.index.read_text(encoding="utf-8")).split())
    assert "1 results name scenarios these feature files do not have" in text
    assert "a-scenario-from-another-kit" in text
    assert "judged against spec text 000000000000" in text


def test_every_result_is_shown_on_its_requirement_page(site: Path) -> None:
    # A requirement has several feature files (examples, properties, lookup): all of them are shown.
    for result in _report(LITE3).scenarios:
        page = (site / f"{result.requirement_id}.html").read_text(encoding="utf-8")
        assert f'id="{result.id}"' in page, (result.requirement_id, result.id)
    index = _text((site / "index.html").read_text(encoding="utf-8"))
    assert "results name scenarios these feature files do not have" not in index


def test_a_property_scenario_shows_its_examples_and_calls(tmp_path: Path) -> None:
    report = _report(LITE3)
    counted = [
        s.model_copy(update={"examples": 100, "calls": {"post_process": 100, "quality": 529}})
        if s.id == "prop-caps-hold-and-keep-the-best-ranks"
        else s
        for s in report.scenarios
    ]
    path = tmp_path / "counted.json"
    path.write_text(report.model_copy(update={"scenarios": tuple(counted)}).model_dump_json())
    build_site([path], tmp_path / "site")
    page = _text((tmp_path / "site" / "rank-order.html").read_text(encoding="utf-8"))
    assert "100 examples" in page
    assert "calls: 100 post_process, 529 quality" in page

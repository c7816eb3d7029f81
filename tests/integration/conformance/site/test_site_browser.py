"""The docs site as a reader sees it: real reports, rendered by headless Chromium.

Three kit runs (the reference, a broken miniature, a conforming one) on one shared Milvus Lite engine,
``rag-conformance docs`` over their reports, then Chromium dumps the rendered DOM of the index and of a
requirement page (the assertions read it) and takes screenshots. The screenshots and the site are kept
as artifacts: under ``tmp_path`` and copied to ``$RQS_ARTIFACT_DIR`` (default ``reports/docs-site`` in
the repository, which git ignores).

Skipped, with the reason, when no Chromium binary is found (``$RQS_CHROMIUM`` names one explicitly).
"""

from __future__ import annotations

import html
import os
import shutil
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from html.parser import HTMLParser
from pathlib import Path

import pytest

from conformance.commands._cli import main
from conformance.commands._matrix import load_matrix
from conformance.reporting import Report, RequirementRow, broken_requirements
from tests.miniatures import MATRIX_PATH

REPO = Path(__file__).resolve().parents[4]
BROKEN, CONFORMING = "DenseDistanceRelabels", "HighlyRelevantLevel"
SEED = "20260728"  # the mutation matrix's seed: these runs are reproducible
CHROMIUM_NAMES = ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable")
CHROMIUM_FLAGS = (
    "--headless",
    "--no-sandbox",  # CI containers run as root, where Chromium's sandbox refuses to start
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--hide-scrollbars",
)


def _find_chromium() -> tuple[str | None, str]:
    """The Chromium binary, or None and the reason the browser tests skip."""
    explicit = os.environ.get("RQS_CHROMIUM")
    if explicit:
        if Path(explicit).is_file():
            return explicit, ""
        return None, f"RQS_CHROMIUM={explicit} is not a file; point it at a Chromium binary"
    found = next((path for name in CHROMIUM_NAMES if (path := shutil.which(name))), None)
    reason = (
        f"no Chromium binary found ({', '.join(CHROMIUM_NAMES)} on PATH, or $RQS_CHROMIUM); "
        "install one (Debian: apt-get install -y chromium) to render the docs site"
    )
    return found, "" if found else reason


CHROMIUM, _NO_CHROMIUM = _find_chromium()
pytestmark = pytest.mark.skipif(CHROMIUM is None, reason=_NO_CHROMIUM)


@dataclass(frozen=True)
class Site:
    root: Path
    reports: dict[str, Report]  # implementation name -> its report
    artifacts: Path


def _artifact_dir() -> Path:
    configured = os.environ.get("RQS_ARTIFACT_DIR")
    path = Path(configured) if configured else REPO / "reports"
    return path / "docs-site"


def _run_kit(adapter: str, milvus: str, report_dir: Path) -> Report:
    """One full kit run in its own process (a pytest session inside this one would share its state)."""
    command = [
        sys.executable,
        "-m",
        "conformance.commands._cli",
        "run",
        "--adapter",
        adapter,
        "--milvus",
        milvus,
    ]
    command += ["--report", str(report_dir), "--", "--rqs-seed", SEED, "--rqs-profile", "selftest"]
    done = subprocess.run(command, cwd=REPO, capture_output=True, text=True, timeout=600, check=False)
    report = report_dir / "report.json"
    assert report.is_file(), (
        f"{adapter}: no report (exit {done.returncode})\n{done.stdout[-3000:]}{done.stderr}"
    )
    return Report.model_validate_json(report.read_bytes())


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Site:
    from conformance.engines import start_engine

    modules = {e.name: e.module for e in load_matrix(MATRIX_PATH)}
    adapters = {
        "reference": "reference",
        BROKEN: f"tests.miniatures.{modules[BROKEN]}:{BROKEN}",
        CONFORMING: f"tests.miniatures.{modules[CONFORMING]}:{CONFORMING}",
    }
    runs = tmp_path_factory.mktemp("reports")
    # One engine for the three runs, each with its own collection prefix; in parallel, since each run
    # spends most of its time waiting on its own process.
    with start_engine("lite") as engine, ThreadPoolExecutor(max_workers=len(adapters)) as pool:
        milvus = f"uri:{engine.endpoint.uri}"
        futures = {name: pool.submit(_run_kit, a, milvus, runs / name) for name, a in adapters.items()}
        reports = {name: future.result() for name, future in futures.items()}
    root = tmp_path_factory.mktemp("site")
    args = ["docs", "--out", str(root)]
    for name in adapters:
        args += ["--results", str(runs / name)]
    assert main(args) == 0
    artifacts = _artifact_dir()
    shutil.rmtree(artifacts, ignore_errors=True)
    shutil.copytree(root, artifacts / "site")
    return Site(root=root, reports=reports, artifacts=artifacts)


def _chromium(url: str, profile: Path, *args: str) -> str:
    command = [CHROMIUM or "chromium", *CHROMIUM_FLAGS, f"--user-data-dir={profile}", *args, url]
    done = subprocess.run(command, capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 0, f"chromium exit {done.returncode}: {done.stderr[-2000:]}"
    return done.stdout


def _render(site: Site, page: str, tmp_path: Path) -> str:
    """The rendered DOM of ``page``; its screenshot is kept in tmp_path and in the artifact dir."""
    url = (site.root / page).as_uri()
    png = tmp_path / f"{Path(page).stem}.png"
    _chromium(url, tmp_path / "profile", f"--screenshot={png}", "--window-size=1280,2000")
    assert png.is_file(), f"chromium wrote no screenshot of {page}"
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert int.from_bytes(png.read_bytes()[16:20], "big") == 1280  # the PNG header's width
    shutil.copy(png, site.artifacts / png.name)
    return _chromium(url, tmp_path / "profile", "--dump-dom")


class _Tables(HTMLParser):
    """Cell texts of every table in a DOM, row by row (what a reader of the rendered page sees)."""

    def __init__(self) -> None:
        super().__init__()
        self.tables: list[list[list[str]]] = []
        self._cell: list[str] | None = None

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag == "table":
            self.tables.append([])
        elif tag == "tr" and self.tables:
            self.tables[-1].append([])
        elif tag in ("td", "th"):
            self._cell = []
        elif tag == "span" and self._cell is not None:
            self._cell.append(" ")  # the verdict and the counts under it are separate words

    def handle_endtag(self, tag: str) -> None:
        if tag in ("td", "th") and self._cell is not None and self.tables and self.tables[-1]:
            self.tables[-1][-1].append(" ".join("".join(self._cell).split()))
            self._cell = None

    def handle_data(self, data: str) -> None:
        if self._cell is not None:
            self._cell.append(data)


def _tables(dom: str) -> list[list[list[str]]]:
    parser = _Tables()
    parser.feed(dom)
    return parser.tables


def test_the_index_shows_the_matrix(site: Site, tmp_path: Path) -> None:
    dom = _render(site, "index.html", tmp_path)
    matrix = next(t for t in _tables(dom) if t[0][0] == "requirement")
    assert matrix[0] == ["requirement", "reference", BROKEN, CONFORMING]
    rows = {row[0].split(" @req:")[0]: row[1:] for row in matrix[1:]}
    reference, broken, conforming = site.reports["reference"], site.reports[BROKEN], site.reports[CONFORMING]

    def title(row: RequirementRow) -> str:  # the spec's requirements carry their number, R1 ... R7
        return f"{row.number} {row.requirement}" if row.number else row.requirement

    for requirement in reference.requirements:
        verdicts = [cell.split(" ")[0] for cell in rows[title(requirement)]]
        assert verdicts[0] == verdicts[2] == "CONFORMS", (requirement.requirement, verdicts)
    failing = {title(r) for r in broken.requirements if r.verdict == "DOES NOT CONFORM"}
    assert failing, "the broken miniature failed nothing: pick one the kit catches"
    for name in failing:
        assert rows[name][1].startswith("DOES NOT CONFORM"), rows[name]
    tally = broken.spec_scenarios
    assert rows["spec scenarios"][1].startswith(f"{tally.judged}/{tally.total} judged, {tally.passed} passed")
    assert conforming.spec_scenarios.passed == conforming.spec_scenarios.total


def test_a_requirement_page_shows_the_failure_message(site: Site, tmp_path: Path) -> None:
    # A failure of its own requirement's rule (one of another requirement's reads "stopped (breaks R1)").
    failed = next(
        s
        for s in site.reports[BROKEN].scenarios
        if s.status == "failed" and s.requirement_id in broken_requirements(s)
    )
    assert failed.message
    dom = _render(site, f"{failed.requirement_id}.html", tmp_path)
    # The message is in a <pre> with no markup inside: the DOM text, unescaped, must hold it whole.
    assert html.escape(failed.message, quote=False) in dom
    assert f'id="{failed.id}"' in dom
    results = next(t for t in _tables(dom) if t[0][0] == "scenario")
    row = next(r for r in results if r[0] == failed.name)
    assert row[1:] == ["passed", "FAILED", "passed"]
    assert "The spec says" in dom

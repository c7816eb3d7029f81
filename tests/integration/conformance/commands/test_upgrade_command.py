"""``rag-conformance upgrade`` end to end, kept small: a few queries of the bundled set, few scenarios.

- the same engine twice: no significant difference anywhere, exit 0 (no false alarm);
- a deliberately degraded engine (a proxy scrambling dense query vectors): a significant drop, exit 1;
- Lite 2.5.1 (the C++ core) to Lite 3.x: every part runs and the report says what differs.
"""

from __future__ import annotations

import json
import socket
from pathlib import Path

import pytest

from conformance.adapters.reference import ReferenceAdapter
from conformance.boundary._protocol import Corpus, MilvusEndpoint
from conformance.commands._cli import main
from conformance.engines import start_engine
from conformance.engines._local import LOCAL_ENGINES, LocalServer, ensure_venv
from tests.integration.conformance.commands.perturbing_proxy import PerturbingProxy

LIMIT = ["--limit", "16"]  # in turn from each kind: standard, paraphrase, exact-token, cross-category, none


def _report(out: Path) -> dict:
    return json.loads((out / "upgrade.json").read_text())


def test_the_same_engine_twice_shows_no_significant_difference_and_exits_0(tmp_path: Path) -> None:
    out = tmp_path / "same"
    code = main(
        ["upgrade", "--from", "lite", "--to", "lite", "--no-suite", *LIMIT, "--out", str(out), "--no-plots"]
    )
    report = _report(out)
    assert code == 0, report["regressions"]
    assert report["verdict"] == "SAFE"
    assert report["regressions"] == []
    errors = [row for row in report["gates"] if row["gate"] == "error rate"]
    tests = [row["test"] for row in report["metrics"] + report["gates"] if row not in errors]
    assert len(report["metrics"]) == 10  # 5 metrics x 2 modes: both modes were compared
    assert all(t["q_value"] >= 0.05 for t in tests)
    # The error rate has its own tolerance (no adjustment): no lookup failed on either side.
    assert [(r["old_counts"]["failed"], r["new_counts"]["failed"]) for r in errors] == [(0, 0), (0, 0)]
    # The labelled set ran whole on both sides, and the TREC runs are kept for anyone's tools.
    for name in ("old-dense.run", "new-dense.run", "old-hybrid.run", "new-hybrid.run", "qrels.txt"):
        assert (out / "runs" / name).stat().st_size > 0
    assert "skipped (--no-suite)" in " ".join(report["not_compared"])


def test_a_degraded_engine_is_caught_with_a_significant_drop_and_exits_1(tmp_path: Path) -> None:
    out = tmp_path / "degraded"
    with start_engine("lite") as engine, PerturbingProxy(engine.endpoint.uri) as broken:
        code = main(
            ["upgrade", "--from", "lite", "--to", f"uri:{broken}", "--no-suite", *LIMIT, "--out", str(out)]
        )
    report = _report(out)
    assert code == 1
    assert report["verdict"] == "REGRESSES"
    dense = {row["metric"]: row for row in report["metrics"] if row["mode"] == "dense"}
    assert dense["nDCG@10"]["regressed"]
    assert dense["nDCG@10"]["test"]["q_value"] < 0.05
    assert dense["nDCG@10"]["test"]["ci_high"] < 0  # the whole interval is a drop
    assert any("nDCG@10 (dense) drops" in line for line in report["regressions"])
    # The report a person reads says the same, and shows it.
    page = (out / "upgrade.md").read_text()
    assert "**REGRESSES** (exit code 1)" in page
    assert "nDCG@10 (dense) drops" in page
    assert (out / "upgrade-deltas.png").is_file()
    assert "REGRESSES" in (out / "upgrade.html").read_text()


class FailsOnTheSecondEngine(ReferenceAdapter):
    """The reference, except that it cannot hold its corpus on the second engine it is handed."""

    prepared = 0

    def prepare(self, endpoint: MilvusEndpoint, corpus: Corpus) -> None:
        type(self).prepared += 1
        if type(self).prepared == 2:
            raise RuntimeError("collection schema refused")
        super().prepare(endpoint, corpus)


def test_an_implementation_that_cannot_prepare_on_the_new_engine_regresses_every_mode(tmp_path: Path) -> None:
    out = tmp_path / "unprepared"
    FailsOnTheSecondEngine.prepared = 0
    adapter = f"{__name__}:FailsOnTheSecondEngine"
    code = main(
        [
            "upgrade",
            "--from",
            "lite",
            "--to",
            "lite",
            "--adapter",
            adapter,
            "--no-suite",
            "--limit",
            "4",
            "--out",
            str(out),
            "--no-plots",
        ]
    )
    report = _report(out)
    assert code == 1
    assert report["verdict"] == "REGRESSES"
    assert [line.split(" mode ")[0] for line in report["regressions"]] == ["dense", "hybrid"]
    assert all(
        "prepare failed: RuntimeError: collection schema refused" in line for line in report["regressions"]
    )


def test_an_engine_that_cannot_be_reached_is_not_judged_and_exits_2(tmp_path: Path) -> None:
    out = tmp_path / "down"
    with socket.socket() as holder:  # a port nothing answers on: bound, never listening
        holder.bind(("127.0.0.1", 0))
        port = holder.getsockname()[1]
        code = main(
            [
                "upgrade",
                "--from",
                "lite",
                "--to",
                f"uri:http://alice:Pl4nted-s3cret@127.0.0.1:{port}",
                "--no-suite",
                *LIMIT,
                "--out",
                str(out),
                "--no-plots",
            ]
        )
    report = _report(out)
    assert code == 2
    assert report["verdict"] == "NOT JUDGED"
    assert report["metrics"] == []
    [line] = [n for n in report["not_compared"] if n.startswith("retrieval")]
    assert f"127.0.0.1:{port}" in line
    # The URI's password appears nowhere: not in the reports, not in the runs.
    assert not [p for p in out.rglob("*") if p.is_file() and b"Pl4nted-s3cret" in p.read_bytes()]


def test_bad_input_is_refused_before_any_engine_starts(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code = main(
        [
            "upgrade",
            "--from",
            "lite",
            "--to",
            "lite",
            "--beir",
            str(tmp_path / "nowhere"),
            "--out",
            str(tmp_path),
        ]
    )
    assert code == 2
    assert "nowhere: not a folder; give the BEIR dataset's folder" in capsys.readouterr().err
    assert not (tmp_path / "upgrade.json").exists()
    assert main(["upgrade", "--from", "lite", "--to", "lite", "--limit", "0", "--out", str(tmp_path)]) == 2
    assert "--limit is 0" in capsys.readouterr().err


def _lite_2_5_1_available() -> None:
    spec = LOCAL_ENGINES["lite-2.5.1"]
    try:
        LocalServer(spec, ensure_venv(spec)).stop()
    except Exception as exc:  # any reason it cannot be installed or started here is a reason to skip
        pytest.skip(f"Milvus Lite 2.5.1 is not available here: {exc}")


def test_lite_2_5_1_to_lite_3_runs_every_part_and_reports_what_differs(tmp_path: Path) -> None:
    _lite_2_5_1_available()
    out = tmp_path / "lite"
    code = main(
        [
            "upgrade",
            "--from",
            "lite-2.5.1",
            "--to",
            "lite",
            "-k",
            "engine-bm25-scores-non-negative or dense-quality-from-l2",
            "--limit",
            "10",
            "--out",
            str(out),
        ]
    )
    report = _report(out)
    assert code == report["exit_code"] in (0, 1)
    assert report["old_version"] != report["new_version"]
    assert report["suite"]["compared"], report["suite"]
    # Lite 3.x negates BM25 scores, a divergence the kit declares: the diff shows it with its reason.
    [bm25] = [s for s in report["suite"]["other"] if s["id"] == "engine-bm25-scores-non-negative"]
    assert (bm25["old"], bm25["new"]) == ("passed", "xfailed")
    assert bm25["message"]
    assert {row["mode"] for row in report["metrics"]} == {"dense", "hybrid"}
    assert all(row["interleaved"] for row in report["latency"])
    # What the verdict rests on is written out, whatever it is.
    page = (out / "upgrade.md").read_text()
    assert report["verdict"] in page
    assert "Lookup latency" in page
    assert "| known divergence | engine-bm25-scores-non-negative | passed | xfailed |" in page
    for line in report["regressions"]:
        assert line in page

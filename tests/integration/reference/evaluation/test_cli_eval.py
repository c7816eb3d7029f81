"""``rag-reference evaluate`` and ``calibrate`` in-process, on small slices of the bundled set.

CI runs them on embedded Milvus Lite (a temporary file the command creates and removes itself).
"""

from __future__ import annotations

import contextlib
import importlib.util
import io
import json
import subprocess
import sys
from pathlib import Path

import pytest
from pymilvus import MilvusClient

from reference import load_run
from reference._cli import main
from reference.evaluation import bundled_beir_path


@pytest.fixture(autouse=True)
def _clean_env(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in (
        "MILVUS_URI",
        "MILVUS_TOKEN",
        "RAG_REFERENCE_THRESHOLD",
        "RETRIEVAL_SEARCH_MODE",
        "RAG_RETURN_N",
    ):
        monkeypatch.delenv(name, raising=False)


def _run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


@pytest.fixture(scope="module")
def evaluated(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str, str]:
    """One evaluate run on 12 queries; tests read its files and output."""
    out_dir = tmp_path_factory.mktemp("evaluate")
    # capsys is function-scoped; a module fixture captures by hand.
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(["evaluate", "--limit", "12", "--out", str(out_dir)])
    assert code == 0, err.getvalue()
    return out_dir, out.getvalue(), err.getvalue()


def test_evaluate_writes_json_and_markdown(evaluated: tuple[Path, str, str]) -> None:
    out_dir, out, _ = evaluated
    data = json.loads((out_dir / "evaluation.json").read_text())
    assert set(data) == {"run", "summary"}
    run = load_run(out_dir / "evaluation.json")
    assert len(run.outcomes) == 12
    assert run.modes == ("dense", "hybrid")
    assert "# Retrieval evaluation" in (out_dir / "evaluation.md").read_text()
    assert f"wrote {out_dir / 'evaluation.json'}, {out_dir / 'evaluation.md'}" in out


def test_evaluate_says_what_is_suspicious_about_the_set(evaluated: tuple[Path, str, str]) -> None:
    out_dir, _, err = evaluated  # 12 queries taken in turn from each kind: 10 answerable
    warning = "only 10 answerable queries: a mean over so few can show only large changes"
    assert f"rag-reference: warning: {warning}" in err
    assert load_run(out_dir / "evaluation.json").warnings[0].startswith(warning)
    assert f"- warning about the set: {warning}" in (out_dir / "evaluation.md").read_text()


def test_the_bundled_set_in_the_beir_layout_gives_the_same_figures(
    evaluated: tuple[Path, str, str], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out_dir, out, _ = evaluated
    beir = bundled_beir_path()
    code, beir_out, err = _run(
        capsys, "evaluate", "--beir", str(beir), "--limit", "12", "--out", str(tmp_path)
    )
    assert code == 0, err
    assert "set: BEIR layout, split test: every _id is docId#chunkIndex" in err
    own, other = (json.loads((d / "evaluation.json").read_text()) for d in (out_dir, tmp_path))
    assert other["summary"] == own["summary"]
    assert other["run"]["outcomes"] == own["run"]["outcomes"]
    assert other["run"]["layout"].startswith("BEIR layout")
    assert other["run"]["qrels"]["path"] == "bundled: evaluation/data/beir/qrels/test.tsv"
    assert beir_out.splitlines()[:2] == out.splitlines()[:2]  # the per-mode summary lines
    for name in ("qrels.txt", "dense.run", "hybrid.run"):
        assert (tmp_path / name).read_text() == (out_dir / name).read_text()


def test_the_trec_files_give_the_reports_ranking_figures_in_ir_measures(
    evaluated: tuple[Path, str, str],
) -> None:
    out_dir, out, _ = evaluated
    summary = json.loads((out_dir / "evaluation.json").read_text())["summary"]
    for mode in ("dense", "hybrid"):
        assert str(out_dir / f"{mode}.run") in out
        row = next(r for r in summary["ranking"] if r["mode"] == mode and r["group"] == "all")
        done = subprocess.run(
            [sys.executable, "-m", "ir_measures", str(out_dir / "qrels.txt"), str(out_dir / f"{mode}.run"),
             *row["metrics"], "--places", "12"],
            capture_output=True, text=True, timeout=120, check=True,
        )  # fmt: skip
        figures = {
            name: float(value) for name, value in (line.split("\t") for line in done.stdout.splitlines())
        }
        assert figures == pytest.approx(row["metrics"], abs=1e-9)
        assert set(figures) == {"R@1", "nDCG@1", "R@5", "nDCG@5", "R@10", "nDCG@10", "RR"}


def test_evaluate_prints_a_summary_per_mode(evaluated: tuple[Path, str, str]) -> None:
    _, out, _ = evaluated
    lines = out.splitlines()
    assert lines[0].strip().startswith("dense: RR ")
    assert lines[1].strip().startswith("hybrid: RR ")
    assert "gate at 0.50: F1" in lines[0]


def test_evaluate_says_what_it_uses_on_stderr_and_no_bar_off_a_terminal(
    evaluated: tuple[Path, str, str],
) -> None:
    _, _, err = evaluated
    assert "rag-reference: embedder: " in err
    assert "rag-reference: engine: Milvus Lite" in err
    assert "(temporary file); ingesting 156 chunks, then 12 queries" in err
    assert "12/12" not in err  # stderr is captured here, not a terminal: no progress bar
    assert "INFO:" not in err  # Milvus Lite's own logging stays quiet
    assert "Traceback" not in err


def test_calibrate_from_a_run_file(
    evaluated: tuple[Path, str, str], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out_dir, _, _ = evaluated
    code, out, err = _run(
        capsys, "calibrate", "--run", str(out_dir / "evaluation.json"), "--out", str(tmp_path)
    )
    assert code == 0, err
    names = {p.name for p in tmp_path.iterdir()}
    assert names == {
        "calibration.json", "calibration.md", "calibration-histograms.png",
        "calibration-sweep.png", "calibration-max-l2.png",
    }  # fmt: skip
    for png in tmp_path.glob("*.png"):
        assert png.read_bytes()[:4] == b"\x89PNG"
    text = (tmp_path / "calibration.md").read_text()
    assert "## Suggested settings" in text
    assert "![Threshold sweep](calibration-sweep.png)" in text
    assert {line.split(":")[0] for line in out.splitlines()[:3]} == {"dense", "hybrid", "hybrid-rank-only"}
    assert json.loads((tmp_path / "calibration.json").read_text())["criterion"].startswith("Youden's J")


class _Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_calibrate_evaluates_first_without_a_run_file_with_bars_on_a_terminal(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    terminal = _Terminal()
    monkeypatch.setattr(sys, "stderr", terminal)
    code, out, _ = _run(
        capsys, "--embedder", "hashing", "calibrate", "--limit", "6", "--modes", "dense", "--no-plots",
        "--out", str(tmp_path),
    )  # fmt: skip
    err = terminal.getvalue()
    assert code == 0, err
    assert "embedder: hashing (384-d" in err
    for bar in ("ingest: 100%", "156/156", "evaluate: 100%", "6/6", "calibrate: 100%", "6/6"):
        assert bar in err  # tqdm's bars: one per step, each finished
    assert {p.name for p in tmp_path.iterdir()} == {
        "evaluation.json", "evaluation.md", "qrels.txt", "dense.run", "calibration.json", "calibration.md",
    }  # fmt: skip
    assert out.splitlines()[-1].startswith("wrote ")


def test_evaluate_at_a_given_uri_drops_its_collection_and_no_progress_means_no_bar(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    terminal = _Terminal()
    monkeypatch.setattr(sys, "stderr", terminal)
    db = str(tmp_path / "mine.db")
    code, _, _ = _run(
        capsys, "--uri", db, "evaluate", "--limit", "3", "--out", str(tmp_path / "r"), "--no-progress"
    )
    err = terminal.getvalue()
    assert code == 0, err
    assert f"engine: {db}" in err
    assert "%|" not in err
    client = MilvusClient(db)
    try:
        assert client.list_collections() == []
    finally:
        client.close()


GOOD_LINE = '{"query": "refund", "relevant": {"billing-refunds#0": 2}}\n'


def _files(tmp_path: Path, queries: str, corpus: str | None = None) -> list[str]:
    q = tmp_path / "queries.jsonl"
    q.write_text(queries)
    args = ["--queries", str(q)]
    if corpus is not None:
        c = tmp_path / "corpus.jsonl"
        c.write_text(corpus)
        args += ["--corpus", str(c)]
    return args


@pytest.mark.parametrize("command", ["evaluate", "calibrate"])
@pytest.mark.parametrize(
    ("queries", "corpus", "where", "message"),
    [
        (
            GOOD_LINE + '{"query": "x", "relevant": {"nope#3": 2}}\n',
            None, "queries.jsonl:2: ", "relevant chunk 'nope#3' is not in the corpus",
        ),
        ("\n\n", None, "queries.jsonl: ", "the file holds no queries"),
        (GOOD_LINE[:-2] + "\n", None, "queries.jsonl:1: ", "not valid JSON"),
        (
            '{"query": "refund", "relevant": {"a#0": 2}}\n',
            '{"docId": "a", "chunkIndex": 0, "text": "t"}\n{"docId": "b"}\n',
            "corpus.jsonl:2: ", "missing field 'chunkIndex'",
        ),
        (
            '{"query": "refund", "relevant": {"a b#0": 2}}\n',
            '{"docId": "a b", "chunkIndex": 0, "text": "t"}\n',
            "corpus.jsonl:1: ", "document id 'a b' holds whitespace, which TREC run and qrels files cannot",
        ),
    ],
    ids=["unknown-chunk", "empty", "malformed", "bad-corpus", "id-with-space"],
)  # fmt: skip
def test_bad_input_is_a_clear_error_before_any_engine_starts(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], command: str, queries: str, corpus: str | None,
    where: str, message: str,
) -> None:  # fmt: skip
    db = tmp_path / "never.db"
    args = ["--uri", str(db), command, *_files(tmp_path, queries, corpus), "--out", str(tmp_path / "o")]
    code, _, err = _run(capsys, *args)
    assert code == 2
    assert where in err
    assert message in err
    assert "Traceback" not in err
    assert not db.exists()
    assert not (tmp_path / "o").exists()


def test_a_missing_run_file_is_a_clear_error(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = _run(capsys, "calibrate", "--run", str(tmp_path / "none.json"), "--no-plots")
    assert code == 2
    assert "none.json: cannot open the file" in err


def test_calibrate_without_matplotlib_fails_before_evaluating(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    real = importlib.util.find_spec
    monkeypatch.setattr(
        importlib.util, "find_spec", lambda name, *a: None if name == "matplotlib" else real(name, *a)
    )
    code, _, err = _run(capsys, "calibrate", "--limit", "3", "--out", str(tmp_path / "o"))
    assert code == 2
    assert "install the plot extra" in err
    assert "--no-plots" in err
    assert "embedder:" not in err  # nothing was evaluated
    assert not (tmp_path / "o").exists()


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["evaluate", "--limit", "0"], "'0' is not a whole number of at least 1"),
        (["evaluate", "--modes", "dense,sparse"], "use dense, hybrid or dense,hybrid"),
        (["evaluate", "--k", "1,x"], "'x' is not a whole number"),
        (["calibrate", "--max-l2", "2,-1"], "every rag.max-l2-distance must be above 0"),
        (["calibrate", "--max-l2", "two"], "not a comma-separated list of numbers"),
        (["evaluate", "--beir-chunks", "pages"], "invalid choice: 'pages'"),
        (["--embedder", "wordllama", "--dim", "64", "evaluate", "--limit", "1"], None),
    ],
)
def test_bad_options_are_usage_errors(
    capsys: pytest.CaptureFixture[str], argv: list[str], message: str | None
) -> None:
    if message is None:  # valid syntax, impossible combination: the library's error, exit 2
        pytest.importorskip("wordllama", reason="the embed extra (wordllama) is not installed")
        code, _, err = _run(capsys, *argv)
        assert code == 2
        assert "256-dimensional vectors, not 64" in err
        return
    with pytest.raises(SystemExit) as info:
        main(argv)
    assert info.value.code == 2
    assert message in capsys.readouterr().err


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--beir", "DIR", "--corpus", "c.jsonl"], "--beir reads the corpus and queries from its folder"),
        (["--split", "dev"], "--split and --beir-chunks apply to a BEIR dataset; add --beir DIR"),
        (["--beir", "no-such-dir"], "no-such-dir: not a folder"),
    ],
)
def test_beir_options_that_do_not_fit_are_clear_errors(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], argv: list[str], message: str
) -> None:
    code, _, err = _run(capsys, "--uri", str(tmp_path / "never.db"), "evaluate", *argv)
    assert code == 2
    assert message in err
    assert not (tmp_path / "never.db").exists()


def test_an_embedder_that_cannot_make_the_dimension_is_a_clear_error(
    capsys: pytest.CaptureFixture[str],
) -> None:
    code, _, err = _run(capsys, "--embedder", "wordllama", "--dim", "64", "evaluate", "--limit", "1")
    assert code == 2
    assert "256-dimensional vectors, not 64" in err

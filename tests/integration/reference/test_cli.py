"""The ``rag-reference`` CLI, run in-process on a temporary Milvus Lite file."""

from __future__ import annotations

import io
import json
import sys
from pathlib import Path

import pytest

from reference._cli import main
from reference._lookup import LookupResult


@pytest.fixture(autouse=True)
def _clean_env(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("MILVUS_URI", "MILVUS_TOKEN", "RAG_RETURN_N", "RETRIEVAL_SEARCH_MODE", "RAG_RETRIEVE_K"):
        monkeypatch.delenv(name, raising=False)


@pytest.fixture(scope="module")
def sample_db(tmp_path_factory: pytest.TempPathFactory) -> str:
    """A Lite file with the bundled sample ingested once; query tests only read it."""
    db = str(tmp_path_factory.mktemp("cli") / "sample.db")
    assert main(["--uri", db, "ingest", "--sample"]) == 0
    return db


def _run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_ingest_sample_reports_count_and_progress(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = _run(capsys, "--uri", str(tmp_path / "s.db"), "ingest", "--sample", "--batch-size", "10")
    assert code == 0
    assert "ingested 32 chunks" in out
    assert "holds 32" in out
    lines = [line.strip() for line in err.splitlines()]
    assert lines[0].startswith("rag-reference: embedder: ")
    assert lines[1:] == []  # stderr is no terminal here: no progress bar


class _Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_ingest_draws_one_progress_bar_on_a_terminal_and_none_with_no_progress(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    for flags, drawn in (((), True), (("--no-progress",), False)):
        terminal = _Terminal()
        monkeypatch.setattr(sys, "stderr", terminal)
        db = str(tmp_path / f"bar{len(flags)}.db")
        assert main(["--uri", db, "ingest", "--sample", "--batch-size", "10", *flags]) == 0
        bar = terminal.getvalue()
        assert ("ingest: " in bar and "32chunk" in bar.replace(" ", "")) is drawn, bar


def test_ingest_twice_does_not_duplicate(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    db = str(tmp_path / "twice.db")
    _run(capsys, "--uri", db, "ingest", "--sample")
    code, out, _ = _run(capsys, "--uri", db, "ingest", "--sample")
    assert code == 0
    assert "holds 32" in out


def test_query_prints_evidence_in_order(sample_db: str, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = _run(
        capsys, "--uri", sample_db, "query", "how do I reset my password", "--category", "account"
    )
    assert code == 0, err
    assert "mode: hybrid" in out
    assert "path: filtered" in out
    assert "retry ran: no" in out
    assert "relevance: " in out
    for column in ("originalRank", "scoreLabel", "score", "denseDistance", "qualityScore", "hitReasons"):
        assert column in out
    rows = [line.split() for line in out.splitlines() if line.strip()[:1].isdigit()]
    assert rows[0][1] == "account-password#0"
    assert [int(r[0]) for r in rows] == sorted(int(r[0]) for r in rows)
    assert {r[2] for r in rows} == {"hybrid"}


def test_query_shows_the_retry(sample_db: str, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = _run(
        capsys, "--uri", sample_db, "query", "how do I reset my password", "--category", "shipping"
    )
    assert code == 0
    assert "path: unfiltered_retry" in out
    assert "retry ran: yes" in out
    assert "filtered attempt:" in out


@pytest.mark.parametrize("mode", ["dense", "hybrid"])
def test_query_json_is_the_lookup_result(
    sample_db: str, capsys: pytest.CaptureFixture[str], mode: str
) -> None:
    code, out, _ = _run(capsys, "--uri", sample_db, "query", "descale the kettle", "--mode", mode, "--json")
    assert code == 0
    assert '"scoreLabel"' in out  # camelCase aliases
    found = LookupResult.model_validate_json(out)
    assert found.path == "unfiltered"
    assert found.result.blocks[0].doc_id == "product-descaling"
    assert {c.score_label for c in found.candidates} == {mode}


def test_uri_from_the_environment(
    sample_db: str, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("MILVUS_URI", sample_db)
    code, out, _ = _run(capsys, "query", "refund", "--json")
    assert code == 0
    assert LookupResult.model_validate_json(out).candidates


def test_settings_file_applies(sample_db: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    settings = tmp_path / "s.toml"
    settings.write_text('[rag]\nreturn-n = 1\n[retrieval.search]\nmode = "dense"\n')
    code, out, _ = _run(capsys, "--uri", sample_db, "query", "invoice", "--settings", str(settings), "--json")
    assert code == 0
    found = LookupResult.model_validate_json(out)
    assert len(found.result.blocks) == 1
    assert found.result.blocks[0].score_label == "dense"


def test_bad_settings_file_is_a_clean_error(
    sample_db: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, _, err = _run(
        capsys, "--uri", sample_db, "query", "x", "--settings", str(tmp_path / "missing.toml")
    )
    assert code == 2
    assert "missing.toml" in err
    assert "Traceback" not in err


def test_ingest_file_with_and_without_vectors(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    data = tmp_path / "chunks.jsonl"
    lines = [
        {"docId": "a", "chunkIndex": 0, "text": "alpha text", "vector": [1, 0, 0, 0]},
        {"docId": "a", "chunkIndex": 1, "text": "beta text", "category": "x", "sourceType": "faq"},
    ]
    data.write_text("\n".join(json.dumps(line) for line in lines) + "\n\n")
    db = str(tmp_path / "f.db")
    code, out, err = _run(capsys, "--uri", db, "--dim", "4", "ingest", str(data))
    assert code == 0, err
    assert "ingested 2 chunks" in out
    code, out, _ = _run(capsys, "--uri", db, "--dim", "4", "query", "beta", "--mode", "hybrid", "--json")
    assert code == 0
    assert LookupResult.model_validate_json(out).result.blocks[0].evidence_key == "a#1"


@pytest.mark.parametrize(
    ("content", "line", "message"),
    [
        (
            '{"docId": "a", "chunkIndex": 0, "text": "ok"}\n{"docId": "b", "chunkIndex": 0,\n',
            2,
            "not valid JSON",
        ),
        ('{"docId": "a", "chunkIndex": 0}\n', 1, "missing field 'text'"),
        ('\n{"docId": "a", "chunkIndex": 0, "text": "t", "vector": [1, 2]}\n', 2, "dimension 2"),
        ('{"docId": "a", "chunkIndex": 0, "text": "t", "titel": "x"}\n', 1, "unknown field 'titel'"),
        ('["docId", "a"]\n', 1, "must be a JSON object"),
        ('{"docId": "", "chunkIndex": 0, "text": "t"}\n', 1, "docId is empty"),
        ('{"docId": "a", "chunkIndex": "zero", "text": "t"}\n', 1, "field 'chunkIndex'"),
    ],
    ids=[
        "bad-json",
        "missing-field",
        "dimension",
        "unknown-field",
        "not-object",
        "empty-doc-id",
        "bad-index",
    ],
)
def test_bad_line_names_file_and_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], content: str, line: int, message: str
) -> None:
    data = tmp_path / "bad.jsonl"
    data.write_text(content)
    code, _, err = _run(capsys, "--uri", str(tmp_path / "b.db"), "--dim", "4", "ingest", str(data))
    assert code == 2
    assert f"{data}:{line}: " in err
    assert message in err
    assert "Traceback" not in err


@pytest.mark.parametrize("content", ["", "\n  \n"])
def test_empty_file_is_an_error(tmp_path: Path, capsys: pytest.CaptureFixture[str], content: str) -> None:
    data = tmp_path / "empty.jsonl"
    data.write_text(content)
    code, _, err = _run(capsys, "--uri", str(tmp_path / "e.db"), "ingest", str(data))
    assert code == 2
    assert f"{data}: the file holds no chunks" in err


def test_missing_file_fails_before_connecting(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = _run(capsys, "--uri", str(tmp_path / "m.db"), "ingest", str(tmp_path / "nope.jsonl"))
    assert code == 2
    assert "nope.jsonl: cannot open the file" in err
    assert not (tmp_path / "m.db").exists()


def test_unreachable_milvus_names_the_uri_not_the_token(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("MILVUS_URI", "http://127.0.0.1:1")
    monkeypatch.setenv("MILVUS_TOKEN", "s3cret")
    code, _, err = _run(capsys, "query", "anything")
    assert code == 2
    assert "http://127.0.0.1:1" in err
    assert "s3cret" not in err
    assert "Traceback" not in err


def test_query_before_ingest_says_what_to_do(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = _run(capsys, "--uri", str(tmp_path / "new.db"), "query", "anything")
    assert code == 2
    assert "does not exist; ingest" in err


def test_drop_removes_the_collection(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    db = str(tmp_path / "d.db")
    data = tmp_path / "one.jsonl"
    data.write_text('{"docId": "a", "chunkIndex": 0, "text": "t"}\n')
    assert _run(capsys, "--uri", db, "--collection", "tmp_c", "ingest", str(data))[0] == 0
    code, out, _ = _run(capsys, "--uri", db, "--collection", "tmp_c", "drop")
    assert code == 0
    assert "dropped 'tmp_c'" in out
    assert _run(capsys, "--uri", db, "--collection", "tmp_c", "query", "t")[0] == 2


def test_bad_dimension_is_a_usage_error(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as info:
        main(["--dim", "1", "query", "x"])
    assert info.value.code == 2
    assert "not a vector dimension" in capsys.readouterr().err


@pytest.mark.parametrize(
    "uri",
    [
        "http://127.0.0.1:1/?token=Tok3nInUri",
        "http://127.0.0.1:1?db=x&token=Tok3nInUri",
        "http://u:Tok3nInUri@127.0.0.1:1",
    ],
)
def test_a_token_in_the_uri_is_masked_when_the_server_is_unreachable(
    capsys: pytest.CaptureFixture[str], uri: str
) -> None:
    code, out, err = _run(capsys, "--uri", uri, "--embedder", "hashing", "query", "anything")
    assert code == 2
    assert "cannot reach Milvus at http://" in err
    assert "Tok3nInUri" not in out + err
    assert "***" in err


def _file(tmp_path: Path, name: str, chunks: list[dict[str, object]]) -> str:
    path = tmp_path / name
    path.write_text("".join(json.dumps(c) + "\n" for c in chunks))
    return str(path)


def test_delete_removes_one_document_and_ingest_replaces_one(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    db = ["--uri", str(tmp_path / "kb.db"), "--embedder", "hashing", "--dim", "8"]
    first = [{"docId": d, "chunkIndex": i, "text": f"{d} text {i}"} for d in ("a", "b") for i in range(5)]
    assert _run(capsys, *db, "ingest", _file(tmp_path, "v1.jsonl", first))[0] == 0
    shrunk = [{"docId": "a", "chunkIndex": i, "text": f"a new text {i}"} for i in range(2)]
    code, out, _ = _run(capsys, *db, "ingest", _file(tmp_path, "v2.jsonl", shrunk))
    assert code == 0
    assert "ingested 2 chunks" in out
    assert "the collection holds 7" in out  # a's five chunks became two; b's five are untouched

    code, out, _ = _run(capsys, *db, "delete", "b")
    assert code == 0
    assert "deleted document 'b' (5 chunks)" in out
    code, out, _ = _run(capsys, *db, "delete", "b")
    assert code == 0
    assert "no document 'b'" in out
    code, out, _ = _run(capsys, *db, "query", "text", "--json")
    assert {b.evidence_key for b in LookupResult.model_validate_json(out).result.blocks} == {"a#0", "a#1"}


def test_query_prints_stored_control_characters_as_escapes(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    db = ["--uri", str(tmp_path / "esc.db"), "--embedder", "hashing", "--dim", "8"]
    hostile = "red \x1b[31malert\x1b[0m \r overwritten \u202e reversed \x9b2J"
    chunk = {"docId": "doc\x1b]0;title\x07", "chunkIndex": 0, "text": hostile}
    assert _run(capsys, *db, "ingest", _file(tmp_path, "esc.jsonl", [chunk]))[0] == 0
    code, out, _ = _run(capsys, *db, "query", "red \x1b[2J alert")
    assert code == 0
    assert not any(ch in out for ch in "\x1b\r\u202e\x9b\x07")
    assert "red \\x1b[31malert\\x1b[0m \\r overwritten \\u202e reversed \\x9b2J" in out
    assert "doc\\x1b]0;title\\x07#0" in out
    assert "query: 'red \\x1b[2J alert'" in out


_FULL_DISK = """
import errno, os, sys
from milvus_lite.engine.collection import Collection

def full(*_, **__):
    raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

Collection.insert = full  # the engine (Milvus Lite, in this process) fails writes as on a full disk
from reference._cli import main
sys.exit(main(sys.argv[1:]))
"""


def test_a_full_disk_is_said_in_one_line(tmp_path: Path) -> None:
    # A process of its own: the engine logs a traceback per failed request and pymilvus another, to
    # the streams their loggers were made with, as a user's shell would show them.
    import subprocess

    db = ["--uri", str(tmp_path / "full.db"), "--embedder", "hashing"]
    done = subprocess.run(
        [sys.executable, "-c", _FULL_DISK, *db, "ingest", "--sample"],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 2, done.stderr
    lines = done.stderr.strip().splitlines()
    assert lines[0].startswith("rag-reference: embedder: ")
    assert len(lines) == 2, done.stderr
    assert "disk where the engine keeps its data is full" in lines[1]

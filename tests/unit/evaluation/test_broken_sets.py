"""Broken labelled sets, each written here with one fault, in both formats: the one validator refuses
each with a :class:`LabelledSetError` naming the file, the line and the id, and both commands turn it
into exit 2 before anything starts (an engine, the suite, the embedder: each is replaced by a tripwire
that fails the test if it is reached, and a sound set shows the tripwires are where they must be)."""

from __future__ import annotations

import gzip
import json
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from conformance.commands._cli import main as conformance_main
from evaluation import LabelledSetError, load_beir_set, load_jsonl_set
from reference._cli import main as reference_main

Rows = list[dict[str, Any]]

BEIR_CORPUS: Rows = [
    {"_id": "faq#0", "text": "Refunds take five days.", "metadata": {"category": "billing"}},
    {"_id": "faq#1", "text": "Parcels ship in two days.", "metadata": {"category": "shipping"}},
    {"_id": "misc#0", "text": "Our offices close at five."},
]
BEIR_QUERIES: Rows = [
    {"_id": "q1", "text": "how long does a refund take", "metadata": {"kind": "standard"}},
    {"_id": "q2", "text": "when does my parcel ship"},
    {"_id": "q3", "text": "what is the meaning of life", "metadata": {"kind": "unanswerable"}},
]
BEIR_QRELS = ["q1\tfaq#0\t2", "q2\tfaq#1\t1", "q2\tmisc#0\t0"]
QREL = b"q1\tfaq#0\t1\n"

CORPUS: Rows = [
    {"docId": "faq", "chunkIndex": 0, "text": "Refunds take five days.", "category": "billing"},
    {"docId": "faq", "chunkIndex": 1, "text": "Parcels ship in two days.", "category": "shipping"},
    {"docId": "misc", "chunkIndex": 0, "text": "Our offices close at five."},
]
QUERIES: Rows = [
    {"id": "q1", "query": "how long does a refund take", "relevant": {"faq#0": 2}},
    {"id": "q2", "query": "when does my parcel ship", "relevant": {"faq#1": 1}},
    {"id": "q3", "query": "what is the meaning of life", "relevant": {}},
]


def _lines(rows: Rows) -> bytes:
    return "".join(json.dumps(row) + "\n" for row in rows).encode()


def _bad_byte(text: bytes, line: int) -> bytes:
    """``text`` with a Latin-1 byte (not UTF-8) at the start of line ``line`` (from 1)."""
    lines = text.splitlines(keepends=True)
    lines[line - 1] = lines[line - 1].replace(b'"', b'"\xe9', 1)
    return b"".join(lines)


def _with(rows: Rows, index: int, **change: Any) -> Rows:
    return [{**row, **change} if i == index else row for i, row in enumerate(rows)]


def write_beir_files(base: Path, corpus: bytes, queries: bytes, qrels: bytes) -> Path:
    (base / "qrels").mkdir(parents=True)
    (base / "corpus.jsonl").write_bytes(corpus)
    (base / "queries.jsonl").write_bytes(queries)
    (base / "qrels" / "test.tsv").write_bytes(b"query-id\tcorpus-id\tscore\n" + qrels)
    return base


def write_beir(
    base: Path, corpus: Rows = BEIR_CORPUS, queries: Rows = BEIR_QUERIES, qrels: list[str] = BEIR_QRELS
) -> Path:
    return write_beir_files(base, _lines(corpus), _lines(queries), "".join(f"{r}\n" for r in qrels).encode())


def write_jsonl(base: Path, corpus: bytes | Rows = CORPUS, queries: bytes | Rows = QUERIES) -> Path:
    base.mkdir(parents=True)
    (base / "corpus.jsonl").write_bytes(corpus if isinstance(corpus, bytes) else _lines(corpus))
    (base / "queries.jsonl").write_bytes(queries if isinstance(queries, bytes) else _lines(queries))
    return base


Writer = Callable[[Path], Path]
# fault -> (write the set, the file the error names, its line, the id it names or None, the words)
BEIR_BROKEN: dict[str, tuple[Writer, str, int | None, str | None, str]] = {
    "query id twice": (
        lambda p: write_beir(p, queries=[*BEIR_QUERIES, BEIR_QUERIES[0]]),
        "queries.jsonl", 4, "q1", "already used on line 1",
    ),
    "document id twice": (
        lambda p: write_beir(p, corpus=[*BEIR_CORPUS, BEIR_CORPUS[0]]),
        "corpus.jsonl", 4, "faq#0", "already used on line 1",
    ),
    "empty query text": (
        lambda p: write_beir(p, queries=_with(BEIR_QUERIES, 1, text="")),
        "queries.jsonl", 2, "q2", "text is empty",
    ),
    "whitespace-only query text": (
        lambda p: write_beir(p, queries=_with(BEIR_QUERIES, 1, text=" \t ")),
        "queries.jsonl", 2, "q2", "text is empty",
    ),
    "qrels for an unknown query": (
        lambda p: write_beir(p, qrels=[*BEIR_QRELS, "q9\tfaq#0\t1"]),
        "test.tsv", 5, "q9", "not in queries.jsonl",
    ),
    "qrels for an unknown document": (
        lambda p: write_beir(p, qrels=[*BEIR_QRELS, "q1\tnope#0\t1"]),
        "test.tsv", 5, "nope#0", "not in corpus.jsonl",
    ),
    "every qrel graded 0": (
        lambda p: write_beir(p, queries=BEIR_QUERIES[1:], qrels=["q2\tfaq#1\t0", "q2\tmisc#0\t-1"]),
        "test.tsv", None, None, "no query has a relevant document",
    ),
    "every qrel graded 0, kinds given": (
        lambda p: write_beir(p, qrels=["q1\tfaq#0\t0", "q2\tfaq#1\t0"]),
        "queries.jsonl", 1, "q1", "a standard query needs at least one relevant chunk",
    ),
    "query id with a space": (
        lambda p: write_beir(
            p, BEIR_CORPUS, _with(BEIR_QUERIES, 0, _id="q 1"), ["q 1\tfaq#0\t2", *BEIR_QRELS[1:]]
        ),
        "queries.jsonl", 1, "q 1", "holds whitespace",
    ),
    "document id with a space": (
        lambda p: write_beir(
            p, _with(BEIR_CORPUS, 2, _id="misc doc#0"), qrels=[*BEIR_QRELS[:2], "q2\tmisc doc#0\t0"]
        ),
        "corpus.jsonl", 3, "misc doc", "holds whitespace",
    ),
    "a kind the format does not know": (
        lambda p: write_beir(p, queries=_with(BEIR_QUERIES, 0, metadata={"kind": "often"})),
        "queries.jsonl", 1, "q1", "kind 'often' is not one of",
    ),
    "a document with no text": (
        lambda p: write_beir(p, corpus=_with(BEIR_CORPUS, 1, text="")),
        "corpus.jsonl", 2, "faq#1", "the text is empty",
    ),
    "no qrels, every query unanswerable": (
        lambda p: write_beir(p, queries=[_with(BEIR_QUERIES, 2)[2]], qrels=[]),
        "test.tsv", None, None, "no query has a relevant document",
    ),
    "a corpus line that is not UTF-8": (
        lambda p: write_beir_files(p, _bad_byte(_lines(BEIR_CORPUS), 2), _lines(BEIR_QUERIES), QREL),
        "corpus.jsonl", 2, None, "not UTF-8",
    ),
    "a queries line that is not UTF-8": (
        lambda p: write_beir_files(p, _lines(BEIR_CORPUS), _bad_byte(_lines(BEIR_QUERIES), 3), QREL),
        "queries.jsonl", 3, None, "not UTF-8",
    ),
    "a qrels line that is not UTF-8": (
        lambda p: write_beir_files(
            p, _lines(BEIR_CORPUS), _lines(BEIR_QUERIES), QREL + b"q2\tfaq\xe9#1\t1\n"
        ),
        "test.tsv", 3, None, "not UTF-8",
    ),
    "query text with an unpaired surrogate": (
        lambda p: write_beir(p, queries=_with(BEIR_QUERIES, 0, text="refund \ud800")),
        "queries.jsonl", 1, "q1", "surrogate",
    ),
}  # fmt: skip

JSONL_BROKEN: dict[str, tuple[Writer, str, int | None, str | None, str]] = {
    "query id twice": (
        lambda p: write_jsonl(p, queries=[*QUERIES, QUERIES[1]]),
        "queries.jsonl", 4, "q2", "already used on line 2",
    ),
    "chunk twice": (
        lambda p: write_jsonl(p, corpus=[*CORPUS, CORPUS[1]]),
        "corpus.jsonl", 4, "faq#1", "already used on line 2",
    ),
    "empty query text": (
        lambda p: write_jsonl(p, queries=_with(QUERIES, 0, query="")),
        "queries.jsonl", 1, "q1", "text is empty",
    ),
    "whitespace-only query text": (
        lambda p: write_jsonl(p, queries=_with(QUERIES, 2, query="\n ")),
        "queries.jsonl", 3, "q3", "text is empty",
    ),
    "a label for an unknown chunk": (
        lambda p: write_jsonl(p, queries=_with(QUERIES, 1, relevant={"nope#0": 1})),
        "queries.jsonl", 2, "nope#0", "not in the corpus",
    ),
    "no answerable query": (
        lambda p: write_jsonl(p, queries=[{**q, "relevant": {}} for q in QUERIES]),
        "queries.jsonl", None, None, "no query has a relevant document",
    ),
    "a corpus line that is not UTF-8": (
        lambda p: write_jsonl(p, corpus=_bad_byte(_lines(CORPUS), 3)),
        "corpus.jsonl", 3, None, "not UTF-8",
    ),
    "a queries line that is not UTF-8": (
        lambda p: write_jsonl(p, queries=_bad_byte(_lines(QUERIES), 1)),
        "queries.jsonl", 1, None, "not UTF-8",
    ),
    "chunk text with an unpaired surrogate": (
        lambda p: write_jsonl(p, corpus=_with(CORPUS, 1, text="ship \udfff days")),
        "corpus.jsonl", 2, "faq#1", "surrogate",
    ),
}  # fmt: skip


def _check(error: LabelledSetError, file: str, line: int | None, item: str | None, words: str) -> None:
    assert error.source is not None
    assert Path(error.source).name == file
    assert error.line == line
    assert error.item_id == item
    text = str(error)
    assert text.startswith(f"{error.source}:{line}: " if line else f"{error.source}: ")
    if item is not None:
        assert repr(item) in text
    assert words in text


def test_the_sound_sets_the_faults_are_made_from_pass(tmp_path: Path) -> None:
    beir = load_beir_set(write_beir(tmp_path / "beir"))
    base = write_jsonl(tmp_path / "jsonl")
    jsonl = load_jsonl_set(base / "corpus.jsonl", base / "queries.jsonl")
    for labelled in (beir, jsonl):
        assert [q.id for q in labelled.answerable] == ["q1", "q2"]
        assert [q.id for q in labelled.queries] == ["q1", "q2", "q3"]


@pytest.mark.parametrize("fault", list(BEIR_BROKEN))
def test_a_broken_beir_set_is_refused_naming_file_line_and_id(tmp_path: Path, fault: str) -> None:
    write, *expected = BEIR_BROKEN[fault]
    with pytest.raises(LabelledSetError) as caught:
        load_beir_set(write(tmp_path / "set"))
    _check(caught.value, *expected)


@pytest.mark.parametrize("fault", list(JSONL_BROKEN))
def test_a_broken_jsonl_set_is_refused_naming_file_line_and_id(tmp_path: Path, fault: str) -> None:
    write, *expected = JSONL_BROKEN[fault]
    base = write(tmp_path / "set")
    with pytest.raises(LabelledSetError) as caught:
        load_jsonl_set(base / "corpus.jsonl", base / "queries.jsonl")
    _check(caught.value, *expected)


class StartedError(AssertionError):
    """Something heavy was reached: the set was not refused first."""


@pytest.fixture
def tripwires(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every way either command starts an engine, the suite or the embedder raises :class:`StartedError`."""

    def trip(*args: Any, **kwargs: Any) -> Any:
        raise StartedError("started before the labelled set was refused")

    for target in (
        "conformance.upgrade._suite.run_column",  # the suite, on both engines
        "conformance.upgrade._suite_runs.start_engine",
        "conformance.upgrade._check.evaluate_engines",  # the labelled set's lookups on both engines
        "conformance.upgrade._sides.start_engine",
        "conformance.upgrade._labelled._embedder",
        "reference.evaluation._cli.make_embedder",
        "reference.evaluation._cli.MilvusKnowledgeStore.connect",
    ):
        monkeypatch.setattr(target, trip)


def _upgrade(beir: Path, out: Path, *more: str) -> int:
    return conformance_main(
        ["upgrade", "--from", "lite", "--to", "lite", "--beir", str(beir), "--out", str(out), *more]
    )


@pytest.mark.usefixtures("tripwires")
def test_the_tripwires_are_reached_by_a_sound_set(tmp_path: Path) -> None:
    beir = write_beir(tmp_path / "beir")
    with pytest.raises(StartedError):
        _upgrade(beir, tmp_path / "up")  # the suite first
    with pytest.raises(StartedError):
        _upgrade(beir, tmp_path / "up2", "--no-suite")  # then the embedder and the engines
    with pytest.raises(StartedError):
        reference_main(["evaluate", "--beir", str(beir), "--out", str(tmp_path / "ref")])
    jsonl = write_jsonl(tmp_path / "jsonl")
    with pytest.raises(StartedError):
        reference_main(
            ["evaluate", "--corpus", str(jsonl / "corpus.jsonl"), "--queries", str(jsonl / "queries.jsonl")]
        )


@pytest.mark.usefixtures("tripwires")
@pytest.mark.parametrize("fault", list(BEIR_BROKEN))
def test_both_commands_refuse_a_broken_beir_set_with_exit_2_before_anything_starts(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], fault: str
) -> None:
    write, file, line, _, words = BEIR_BROKEN[fault]
    beir = write(tmp_path / "set")
    where = re.escape(f"{file}:{line}: " if line else f"{file}: ")
    assert _upgrade(beir, tmp_path / "up") == 2
    out, err = capsys.readouterr()
    assert re.search(f"^rag-conformance upgrade: .*{where}.*{re.escape(words)}", err), err
    assert "Traceback" not in out + err
    assert not (tmp_path / "up").exists()
    code = reference_main(["evaluate", "--beir", str(beir), "--out", str(tmp_path / "ref")])
    assert code == 2
    err = capsys.readouterr().err
    assert re.search(f"^rag-reference: error: .*{where}.*{re.escape(words)}", err), err
    assert not (tmp_path / "ref").exists()


@pytest.mark.usefixtures("tripwires")
@pytest.mark.parametrize("command", ["evaluate", "calibrate"])
@pytest.mark.parametrize("fault", list(JSONL_BROKEN))
def test_evaluate_and_calibrate_refuse_a_broken_jsonl_set_with_exit_2_before_anything_starts(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], fault: str, command: str
) -> None:
    write, file, line, item, words = JSONL_BROKEN[fault]
    base = write(tmp_path / "set")
    files = ["--corpus", str(base / "corpus.jsonl"), "--queries", str(base / "queries.jsonl")]
    plots = ["--no-plots"] if command == "calibrate" else []
    assert reference_main([command, *files, *plots, "--out", str(tmp_path / "ref")]) == 2
    err = capsys.readouterr().err
    where = re.escape(f"{file}:{line}: " if line else f"{file}: ")
    assert re.search(f"^rag-reference: error: .*{where}.*{re.escape(words)}", err), err
    if item is not None:
        assert repr(item) in err
    assert not (tmp_path / "ref").exists()


@pytest.mark.usefixtures("tripwires")
def test_calibrate_refuses_a_set_of_one_class_before_anything_starts(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    base = write_jsonl(tmp_path / "set", queries=QUERIES[:2])  # evaluate takes it, with a warning
    files = ["--corpus", str(base / "corpus.jsonl"), "--queries", str(base / "queries.jsonl")]
    with pytest.raises(StartedError):
        reference_main(["evaluate", *files, "--out", str(tmp_path / "ref")])
    assert "rag-reference: warning: no unanswerable query" in capsys.readouterr().err
    assert reference_main(["calibrate", *files, "--no-plots", "--out", str(tmp_path / "ref")]) == 2
    err = capsys.readouterr().err
    assert "calibration needs answerable and unanswerable queries; this set has 2 answerable and no " in err
    bundled_slice = reference_main(
        ["calibrate", "--limit", "1", "--no-plots", "--out", str(tmp_path / "ref")]
    )
    assert bundled_slice == 2
    err = capsys.readouterr().err
    assert (
        "has 1 answerable and no unanswerable ones: add queries of kind unanswerable (or raise --limit)"
        in err
    )


@pytest.mark.parametrize(
    ("content", "words"),
    [
        (gzip.compress(_lines(CORPUS)), "corpus.jsonl:1: not UTF-8 text but a gzip file; unpack it"),
        (_lines(CORPUS).decode().encode("utf-16"), "corpus.jsonl:1: not UTF-8 text but UTF-16 text"),
        (_bad_byte(_lines(CORPUS), 2), "corpus.jsonl:2: not UTF-8 text (byte 0xe9 at byte 3 of the line)"),
    ],
    ids=["gzip", "utf-16", "latin-1"],
)
def test_a_file_that_is_not_utf8_says_what_it_is_and_where(
    tmp_path: Path, content: bytes, words: str
) -> None:
    base = write_jsonl(tmp_path / "set", corpus=content)
    with pytest.raises(LabelledSetError, match=re.escape(words)):
        load_jsonl_set(base / "corpus.jsonl", base / "queries.jsonl")

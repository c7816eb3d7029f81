"""The one validator of labelled sets: broken BEIR sets (written here, each with one fault) are refused
with the file, line and id, by the shared reader and so by both commands before any engine starts; the
unbroken set they are made from passes."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

import evaluation
from conformance.commands._cli import main as conformance_main
from evaluation import LabelledSetError, load_beir_set, load_jsonl_set, write_beir
from reference._cli import main as reference_main

CORPUS = [
    {"_id": "faq#0", "text": "Refunds take five days.", "metadata": {"category": "billing"}},
    {"_id": "faq#1", "text": "Parcels ship in two days.", "metadata": {"category": "shipping"}},
    {"_id": "misc#0", "text": "Our offices close at five."},
]
QUERIES = [
    {"_id": "q1", "text": "how long does a refund take", "metadata": {"kind": "standard"}},
    {"_id": "q2", "text": "when does my parcel ship"},
    {"_id": "q3", "text": "what is the meaning of life", "metadata": {"kind": "unanswerable"}},
]
QRELS = ["q1\tfaq#0\t2", "q2\tfaq#1\t1", "q2\tmisc#0\t0"]


def _write(base: Path, corpus: list[Any], queries: list[Any], qrels: list[str]) -> Path:
    (base / "qrels").mkdir(parents=True)
    (base / "corpus.jsonl").write_text("".join(json.dumps(row) + "\n" for row in corpus))
    (base / "queries.jsonl").write_text("".join(json.dumps(row) + "\n" for row in queries))
    (base / "qrels" / "test.tsv").write_text(
        "query-id\tcorpus-id\tscore\n" + "".join(f"{r}\n" for r in qrels)
    )
    return base


def _with(rows: list[dict[str, Any]], index: int, **change: Any) -> list[dict[str, Any]]:
    return [{**row, **change} if i == index else row for i, row in enumerate(rows)]


BROKEN = {
    "query id with a space": (
        CORPUS, _with(QUERIES, 0, _id="q 1"), ["q 1\tfaq#0\t2", *QRELS[1:]],
        r"queries.jsonl:1: query id 'q 1' holds whitespace",
    ),
    "document id with a space": (
        _with(CORPUS, 2, _id="misc doc#0"), QUERIES, [*QRELS[:2], "q2\tmisc doc#0\t0"],
        r"corpus.jsonl:3: document id 'misc doc' holds whitespace",
    ),
    "query id twice": (
        CORPUS, [*QUERIES, QUERIES[0]], QRELS, r"queries.jsonl:4: query _id 'q1' was already used on line 1",
    ),
    "document id twice": (
        [*CORPUS, CORPUS[0]], QUERIES, QRELS, r"corpus.jsonl:4: _id 'faq#0' was already used on line 1",
    ),
    "empty query text": (
        CORPUS, _with(QUERIES, 1, text="  "), QRELS, r"queries.jsonl:2: the query text is empty",
    ),
    "qrels for an unknown query": (
        CORPUS, QUERIES, [*QRELS, "q9\tfaq#0\t1"], r"test.tsv: query 'q9' is judged but not in queries.jsonl",
    ),
    "qrels for an unknown document": (
        CORPUS, QUERIES, [*QRELS, "q1\tnope#0\t1"], r"test.tsv:5: corpus-id 'nope#0' is not in corpus.jsonl",
    ),
    "a kind the format does not know": (
        CORPUS, _with(QUERIES, 0, metadata={"kind": "often"}), QRELS, r"queries.jsonl:1: kind 'often'",
    ),
    "a document with no text": (
        _with(CORPUS, 1, text=""), QUERIES, QRELS, r"corpus.jsonl:2: chunk 'faq'#1: text is empty",
    ),
}  # fmt: skip


def test_the_unbroken_set_passes(tmp_path: Path) -> None:
    labelled = load_beir_set(_write(tmp_path, CORPUS, QUERIES, QRELS))
    assert [(q.id, q.kind, q.relevant) for q in labelled.queries] == [
        ("q1", "standard", {"faq#0": 2}),
        ("q2", "standard", {"faq#1": 1}),
        ("q3", "unanswerable", {}),
    ]


@pytest.mark.parametrize("fault", list(BROKEN))
def test_a_broken_set_is_refused_naming_the_file_and_line(tmp_path: Path, fault: str) -> None:
    corpus, queries, qrels, message = BROKEN[fault]
    with pytest.raises(LabelledSetError, match=message):
        load_beir_set(_write(tmp_path, corpus, queries, qrels))


@pytest.mark.parametrize("fault", ["query id with a space", "document id with a space", "query id twice"])
def test_both_commands_refuse_a_broken_set_before_any_engine_starts(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], fault: str
) -> None:
    corpus, queries, qrels, message = BROKEN[fault]
    beir = str(_write(tmp_path / "set", corpus, queries, qrels))
    assert reference_main(["evaluate", "--beir", beir, "--out", str(tmp_path / "ref")]) == 2
    assert "rag-reference: error: " in (err := capsys.readouterr().err)
    assert re.search(message, err)
    code = conformance_main(
        ["upgrade", "--from", "lite", "--to", "lite", "--beir", beir, "--out", str(tmp_path / "up")]
    )
    assert code == 2
    assert re.search(message, capsys.readouterr().err)
    assert not (tmp_path / "ref").exists()
    assert not (tmp_path / "up" / "upgrade.json").exists()  # nothing ran: no engine, no suite


def test_a_set_built_in_code_is_held_to_the_same_rules() -> None:
    bundled = load_jsonl_set()
    doubled = bundled.model_copy(update={"queries": (*bundled.queries, bundled.queries[0])})
    with pytest.raises(LabelledSetError, match="query id 'q001' is used twice"):
        evaluation.validate_set(doubled)
    spaced = bundled.model_copy(update={"queries": (bundled.queries[0].model_copy(update={"id": "q 1"}),)})
    with pytest.raises(LabelledSetError, match="query id 'q 1' holds whitespace"):
        evaluation.validate_set(spaced)
    assert evaluation.validate_set(bundled) is bundled


def test_the_bundled_set_reads_the_same_in_both_formats(tmp_path: Path) -> None:
    jsonl, beir = load_jsonl_set(), load_beir_set(evaluation.bundled_beir_path())
    assert jsonl.queries == beir.queries
    assert [c.evidence_key for c in jsonl.corpus] == [c.evidence_key for c in beir.corpus]
    again = load_beir_set(write_beir(jsonl, tmp_path / "copy"))
    assert again.queries == jsonl.queries

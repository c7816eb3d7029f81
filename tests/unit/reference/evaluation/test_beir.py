"""BEIR-layout datasets: the bundled copy is the bundled set, and the layout's rules hold."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from reference import EvalSetError, bundled_eval_paths, load_eval_set
from reference.evaluation import bundled_beir_path, load_beir_set, write_beir


def _folder(
    tmp_path: Path, corpus: list[object], queries: list[object], qrels: str, split: str = "test"
) -> Path:
    (tmp_path / "qrels").mkdir(parents=True, exist_ok=True)
    for name, rows in (("corpus.jsonl", corpus), ("queries.jsonl", queries)):
        text = "".join((r if isinstance(r, str) else json.dumps(r)) + "\n" for r in rows)
        (tmp_path / name).write_text(text, encoding="utf-8")
    (tmp_path / "qrels" / f"{split}.tsv").write_text(qrels, encoding="utf-8")
    return tmp_path


DOCS = [
    {"_id": "d1", "title": "Refunds", "text": "Refunds take five days.", "metadata": {"category": "billing"}},
    {"_id": "d2", "title": "", "text": "Parcels ship in two days.", "metadata": {"category": "shipping"}},
    {"_id": "d3#0", "text": "An id that looks like a key, in a corpus of documents."},
]
QUERIES = [
    {"_id": "q1", "text": "refund time", "metadata": {"category": "billing"}},
    {"_id": "q2", "text": "when does it ship"},
    {"_id": "q3", "text": "nothing relevant was judged"},
    {"_id": "q4", "text": "banana bread", "metadata": {"kind": "unanswerable", "note": "out of domain"}},
    {"_id": "q5", "text": "a query of another split"},
]
QRELS = "query-id\tcorpus-id\tscore\nq1\td1\t2\nq1\td2\t0\nq2\td2\t1\nq2\td3#0\t1\nq3\td1\t0\n"


def test_the_bundled_copy_is_the_bundled_set() -> None:
    own, beir = load_eval_set(), load_beir_set(bundled_beir_path())
    assert beir.corpus == own.corpus
    assert beir.queries == own.queries
    assert beir.trec_docids == "evidence_key"
    assert "every _id is docId#chunkIndex" in beir.layout
    assert beir.qrels_source == str(bundled_beir_path() / "qrels" / "test.tsv")


def test_the_bundled_copy_is_what_write_beir_makes_of_the_bundled_set(tmp_path: Path) -> None:
    # So evaluation/data/README.md's one command regenerates it after the JSON Lines files change.
    write_beir(load_eval_set(), tmp_path)
    for name in ("corpus.jsonl", "queries.jsonl", "qrels/test.tsv"):
        assert (tmp_path / name).read_bytes() == (bundled_beir_path() / name).read_bytes(), name
    assert bundled_beir_path().parent == bundled_eval_paths()[0].parent


def test_documents_become_one_chunk_each_with_title_and_text(tmp_path: Path) -> None:
    s = load_beir_set(_folder(tmp_path, DOCS, QUERIES, QRELS))
    assert s.layout == "BEIR layout, split test: one chunk per document"
    assert s.trec_docids == "doc_id"
    assert [(c.doc_id, c.chunk_index, c.category) for c in s.corpus] == [
        ("d1", 0, "billing"), ("d2", 0, "shipping"), ("d3#0", 0, None),
    ]  # fmt: skip
    assert s.corpus[0].text == "Refunds Refunds take five days."
    assert s.corpus[1].text == "Parcels ship in two days."


def test_queries_are_those_the_split_judges_and_the_declared_unanswerable(tmp_path: Path) -> None:
    s = load_beir_set(_folder(tmp_path, DOCS, QUERIES, QRELS))
    by_id = {q.id: q for q in s.queries}
    assert list(by_id) == ["q1", "q2", "q3", "q4"]  # q5 belongs to another split
    assert by_id["q1"].relevant == {"d1#0": 2}  # the score-0 judgement is not relevant
    assert by_id["q1"].category == "billing"
    assert by_id["q2"].relevant == {"d2#0": 1, "d3#0#0": 1}
    assert (by_id["q3"].kind, by_id["q3"].relevant) == ("unanswerable", {})  # judged, nothing relevant
    assert (by_id["q4"].kind, by_id["q4"].note) == ("unanswerable", "out of domain")


def test_a_query_of_a_declared_kind_needs_a_relevant_judgement(tmp_path: Path) -> None:
    queries = [{"_id": "q1", "text": "t", "metadata": {"kind": "paraphrase"}}]
    with pytest.raises(
        EvalSetError, match=r"queries.jsonl:1: query 'q1': a paraphrase query needs at least one relevant"
    ):
        load_beir_set(_folder(tmp_path, DOCS, queries, "q1\td1\t0\n"))


def test_keyed_ids_are_chunks_of_their_documents(tmp_path: Path) -> None:
    docs = [{"_id": "faq#0", "text": "a"}, {"_id": "faq#1", "text": "b"}, {"_id": "x#10", "text": "c"}]
    s = load_beir_set(_folder(tmp_path, docs, [{"_id": "q", "text": "t"}], "q\tfaq#1\t3\n"))
    assert [(c.doc_id, c.chunk_index) for c in s.corpus] == [("faq", 0), ("faq", 1), ("x", 10)]
    assert s.queries[0].relevant == {"faq#1": 3}  # no header line; grades above 3 are kept
    assert load_beir_set(tmp_path, chunks="document").corpus[1].doc_id == "faq#1"


@pytest.mark.parametrize(
    ("corpus", "queries", "qrels", "options", "where", "message"),
    [
        (DOCS, QUERIES, QRELS, {"chunks": "keyed"}, "corpus.jsonl:1: ", "_id 'd1' is not docId#chunkIndex"),
        (DOCS, QUERIES, QRELS, {"split": "dev"}, "qrels/dev.tsv: ", "the splits here are test"),
        (DOCS, QUERIES, QRELS + "q2\tnope\t1\n", {}, "test.tsv:7: ", "corpus-id 'nope' is not in corpus"),
        (DOCS, QUERIES, QRELS + "q2 d1 1\n", {}, "test.tsv:7: ", "query-id<TAB>corpus-id<TAB>score"),
        (DOCS, QUERIES, QRELS + "q2\td2\t2\n", {}, "test.tsv:7: ", "q2 d2 is judged twice"),
        (DOCS, QUERIES, QRELS + "q9\td2\t1\n", {}, "test.tsv:7: ", "query 'q9' is judged but not in queries"),
        (DOCS, [{"_id": "q1", "text": "t", "metadata": {"kind": "unanswerable"}}], "q1\td1\t1\n", {},
         "queries.jsonl:1: ", "an unanswerable query must have no relevant chunk"),
        (DOCS, [{"_id": "q1", "text": "t", "metadata": {"category": "toys"}}], "q1\td1\t1\n", {},
         "queries.jsonl:1: ", "category 'toys' is on no chunk"),
        ([*DOCS, {"_id": "d1", "text": "again"}], QUERIES, QRELS, {}, "corpus.jsonl:4: ",
         "already used on line 1"),
        ([{"_id": "d1", "title": "", "text": " "}], QUERIES, QRELS, {}, "corpus.jsonl:1: ", "text is empty"),
        ([{"title": "t", "text": "x"}], QUERIES, QRELS, {}, "corpus.jsonl:1: ", "missing field '_id'"),
        (DOCS, ["{not json"], QRELS, {}, "queries.jsonl:1: ", "not valid JSON"),
    ],
    ids=["keyed-not-a-key", "no-split", "unknown-doc", "not-tabs", "twice", "unknown-query",
         "unanswerable-labelled", "unknown-category", "doubled-id", "empty-text", "no-id", "bad-json"],
)  # fmt: skip
def test_bad_input_names_its_file_and_line(
    tmp_path: Path, corpus: list[object], queries: list[object], qrels: str, options: dict[str, str],
    where: str, message: str,
) -> None:  # fmt: skip
    with pytest.raises(EvalSetError) as info:
        load_beir_set(_folder(tmp_path, corpus, queries, qrels), **options)  # type: ignore[arg-type]
    assert where in str(info.value)
    assert message in str(info.value)


def test_a_missing_folder_is_an_error(tmp_path: Path) -> None:
    with pytest.raises(EvalSetError, match="not a folder"):
        load_beir_set(tmp_path / "absent")

"""The labelled set: the bundled one meets what it promises, and bad input names its line."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest

import evaluation
from evaluation import KINDS, LabelledSetError, read_queries, slice_set
from reference import EvalSet, EvalSetError, bundled_eval_paths, load_eval_set

CORPUS = [
    {"docId": "faq", "chunkIndex": 0, "text": "Refunds take five days.", "category": "billing"},
    {"docId": "faq", "chunkIndex": 1, "text": "Parcels ship in two days.", "category": "shipping"},
    {"docId": "misc", "chunkIndex": 0, "text": "No category on this one."},
]
R = {"faq#0": 2}
GOOD = {
    "id": "q1",
    "query": "refund time",
    "kind": "standard",
    "category": "billing",
    "relevant": {"faq#0": 2},
}


@pytest.fixture(scope="module")
def bundled() -> EvalSet:
    return load_eval_set()


def _write(path: Path, rows: list[object]) -> Path:
    path.write_text(
        "".join((r if isinstance(r, str) else json.dumps(r)) + "\n" for r in rows), encoding="utf-8"
    )
    return path


def _set(tmp_path: Path, queries: list[object], corpus: list[object] | None = None) -> EvalSet:
    c = _write(tmp_path / "corpus.jsonl", corpus if corpus is not None else CORPUS)
    q = _write(tmp_path / "queries.jsonl", queries)
    return load_eval_set(c, q)


# -- the bundled set --------------------------------------------------------------------------------


def test_bundled_set_has_the_promised_size_and_spread(bundled: EvalSet) -> None:
    assert len(bundled.corpus) >= 150
    assert len(bundled.queries) >= 120
    assert len(bundled.categories) >= 5
    chunks_per_doc = Counter(c.doc_id for c in bundled.corpus)
    assert min(chunks_per_doc.values()) == 1
    assert max(chunks_per_doc.values()) >= 4
    lengths = sorted(len(c.text) for c in bundled.corpus)
    assert lengths[-1] > 3 * lengths[0]  # short answers and long runbook passages


def test_bundled_set_has_every_kind_and_graded_labels(bundled: EvalSet) -> None:
    counts = bundled.kind_counts()
    assert set(counts) == set(KINDS)
    assert all(n >= 10 for n in counts.values()), counts
    grades = Counter(g for q in bundled.queries for g in q.relevant.values())
    assert grades[1] > 0
    assert grades[2] > 0


def test_cross_category_queries_are_answered_outside_their_category(bundled: EvalSet) -> None:
    category_of = {c.evidence_key: c.category for c in bundled.corpus}
    cross = [q for q in bundled.queries if q.kind == "cross_category"]
    for q in cross:
        assert q.category is not None, q.id
        assert all(category_of[key] != q.category for key in q.relevant), q.id


def test_unanswerable_queries_have_no_labels_and_some_name_a_category(bundled: EvalSet) -> None:
    unanswerable = [q for q in bundled.queries if q.kind == "unanswerable"]
    assert all(not q.relevant for q in unanswerable)
    assert any(q.category for q in unanswerable)  # they exercise the retry too


def test_bundled_paths_point_into_the_package() -> None:
    corpus, queries = bundled_eval_paths()
    assert corpus.name == "corpus.jsonl"
    assert queries.name == "queries.jsonl"
    assert corpus.parent.name == "data"
    assert corpus.parent.parent.name == "evaluation"
    assert corpus.is_file()
    assert queries.is_file()


# -- slicing ----------------------------------------------------------------------------------------


def test_slice_takes_every_kind_in_turn(bundled: EvalSet) -> None:
    small = slice_set(bundled, 10)
    assert len(small.queries) == 10
    assert set(small.kind_counts()) == set(KINDS)
    assert small.corpus == bundled.corpus
    order = [q.id for q in bundled.queries]
    assert [q.id for q in small.queries] == sorted((q.id for q in small.queries), key=order.index)


def test_slice_larger_than_the_set_keeps_everything(bundled: EvalSet) -> None:
    assert slice_set(bundled, 10_000).queries == bundled.queries


@pytest.mark.parametrize("limit", [0, -1, True, 2.5])
def test_slice_refuses_a_bad_limit(bundled: EvalSet, limit: object) -> None:
    with pytest.raises(evaluation.EvaluationError, match="limit"):
        slice_set(bundled, limit)  # type: ignore[arg-type]


# -- reading queries --------------------------------------------------------------------------------


def test_defaults_for_kind_and_id(tmp_path: Path) -> None:
    loaded = _set(
        tmp_path, ["", {"query": "refund", "relevant": {"faq#0": 1}}, {"query": "weather", "relevant": {}}]
    )
    first, second = loaded.queries
    assert (first.id, first.kind, first.answerable) == ("line-2", "standard", True)
    assert (second.id, second.kind, second.answerable) == ("line-3", "unanswerable", False)


def test_a_byte_order_mark_on_the_first_line_is_accepted(tmp_path: Path) -> None:
    c = _write(tmp_path / "corpus.jsonl", CORPUS)
    q = tmp_path / "queries.jsonl"
    q.write_bytes(b"\xef\xbb\xbf" + json.dumps(GOOD).encode() + b"\n")
    assert load_eval_set(c, q).queries[0].id == "q1"


@pytest.mark.parametrize(
    ("line", "message"),
    [
        ('{"query": "refund", ', "not valid JSON"),
        ('["refund"]', "must be a JSON object"),
        ({**GOOD, "relevance": {}}, "unknown field 'relevance'"),
        ({"relevant": {"faq#0": 2}}, "the text is empty"),
        ({"query": "  ", "relevant": {"faq#0": 2}}, "the text is empty"),
        ({"query": "refund"}, "missing field 'relevant'"),
        ({"query": "refund", "relevant": ["faq#0"]}, "'relevant' must be an object"),
        ({"query": "refund", "relevant": {"faq#7": 2}}, "relevant chunk 'faq#7' is not in the corpus"),
        ({"query": "refund", "relevant": {"faq#0": 0}}, "grade 0 for 'faq#0'"),
        ({"query": "refund", "relevant": {"faq#0": 4}}, "grade 4 for 'faq#0'"),
        ({"query": "refund", "relevant": {"faq#0": "2"}}, "grade '2' for 'faq#0'"),
        ({"query": "refund", "relevant": {"faq#0": True}}, "grade True for 'faq#0'"),
        ({"query": "refund", "kind": "unanswerable", "relevant": R}, "must have no relevant chunk"),
        ({"query": "refund", "kind": "paraphrase", "relevant": {}}, "needs at least one relevant chunk"),
        ({"query": "refund", "kind": "fuzzy", "relevant": {"faq#0": 2}}, "kind 'fuzzy' is not one of"),
        ({"query": "refund", "category": "billng", "relevant": R}, "category 'billng' is on no chunk"),
        ({"query": "refund", "id": "", "relevant": {"faq#0": 2}}, "'id' must be a non-empty string"),
        ({"query": "refund", "note": 3, "relevant": {"faq#0": 2}}, "'note' must be a string"),
    ],
    ids=[
        "bad-json", "not-object", "unknown-field", "no-query", "blank-query", "no-relevant",
        "relevant-list", "unknown-chunk", "grade-0", "grade-4", "grade-text", "grade-bool",
        "unanswerable-with-labels", "answerable-without", "unknown-kind", "unknown-category",
        "empty-id", "note-number",
    ],
)  # fmt: skip
def test_bad_query_line_names_file_and_line(tmp_path: Path, line: object, message: str) -> None:
    with pytest.raises(EvalSetError) as info:
        _set(tmp_path, [GOOD, "", line])
    assert str(info.value).startswith(f"{tmp_path / 'queries.jsonl'}:3: ")
    assert message in str(info.value)
    assert info.value.line == 3


def test_repeated_id_names_both_lines(tmp_path: Path) -> None:
    with pytest.raises(EvalSetError, match=r"queries.jsonl:2: query id 'q1' was already used on line 1"):
        _set(tmp_path, [GOOD, GOOD])


@pytest.mark.parametrize("content", ["", "\n   \n"])
def test_a_file_without_queries_is_an_error(tmp_path: Path, content: str) -> None:
    c = _write(tmp_path / "corpus.jsonl", CORPUS)
    q = tmp_path / "queries.jsonl"
    q.write_text(content)
    with pytest.raises(EvalSetError, match=r"queries.jsonl: the file holds no queries"):
        load_eval_set(c, q)


def test_not_utf8_names_the_line(tmp_path: Path) -> None:
    c = _write(tmp_path / "corpus.jsonl", CORPUS)
    q = tmp_path / "queries.jsonl"
    q.write_bytes(json.dumps(GOOD).encode() + b"\n" + b'{"query": "caf\xe9"}\n')
    with pytest.raises(EvalSetError, match=r"queries.jsonl:2: not UTF-8"):
        load_eval_set(c, q)


def test_a_missing_queries_file_is_an_error(tmp_path: Path) -> None:
    with pytest.raises(LabelledSetError, match=r"nope.jsonl: cannot open the file"):
        read_queries(tmp_path / "nope.jsonl", chunk_keys=[], categories=[])


# -- reading the corpus -----------------------------------------------------------------------------


def test_a_bad_corpus_line_names_file_and_line(tmp_path: Path) -> None:
    with pytest.raises(EvalSetError, match=r"corpus.jsonl:2: missing field 'text'"):
        _set(tmp_path, [GOOD], corpus=[CORPUS[0], {"docId": "x", "chunkIndex": 0}])


def test_an_empty_corpus_is_an_error(tmp_path: Path) -> None:
    with pytest.raises(EvalSetError, match=r"corpus.jsonl: the file holds no chunks"):
        _set(tmp_path, [GOOD], corpus=[""])


def test_a_repeated_chunk_is_an_error(tmp_path: Path) -> None:
    with pytest.raises(EvalSetError, match=r"corpus.jsonl:4: chunk 'faq#0' was already used on line 1"):
        _set(tmp_path, [GOOD], corpus=[*CORPUS, CORPUS[0]])


def test_errors_belong_to_the_reference_family(tmp_path: Path) -> None:
    from reference import RetrievalQualityError

    with pytest.raises(RetrievalQualityError):
        _set(tmp_path, [{"query": "x", "relevant": {"nope#0": 1}}])

"""What is suspicious about a labelled set, though allowed, is said in its ``warnings``: each warning
appears on a set made to deserve it and not on its sound neighbour (the bundled set deserves none), a
slice says what is true of the slice, and both commands pass the words on."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

import evaluation
from conformance.upgrade import load_labelled_set
from evaluation import LabelledSet, load_beir_set, load_jsonl_set, slice_set, validate_set, write_beir
from evaluation.sets._warnings import FEW_ANSWERABLE
from reference._cli import main as reference_main


@pytest.fixture(scope="module")
def bundled() -> LabelledSet:
    return load_jsonl_set()


def _queries(labelled: LabelledSet, *queries: Any) -> LabelledSet:
    return validate_set(labelled.model_copy(update={"queries": tuple(queries)}))


def test_the_bundled_set_deserves_no_warning_in_either_format(bundled: LabelledSet) -> None:
    assert bundled.warnings == ()
    assert load_beir_set(evaluation.bundled_beir_path()).warnings == ()
    # Its one repeated text is asked in two categories (the category retry's case): two lookups.
    asked = [q for q in bundled.queries if q.query == "how do I cancel my subscription"]
    assert [(q.id, q.category) for q in asked] == [("q023", "billing"), ("q099", "account")]


def test_too_few_answerable_queries_is_said_with_the_number(bundled: LabelledSet) -> None:
    answerable = bundled.answerable
    unanswerable = tuple(q for q in bundled.queries if not q.relevant)
    enough = _queries(bundled, *answerable[:FEW_ANSWERABLE], *unanswerable)
    few = _queries(bundled, *answerable[: FEW_ANSWERABLE - 1], *unanswerable)
    assert enough.warnings == ()
    (warning,) = few.warnings
    assert warning.startswith(f"only {FEW_ANSWERABLE - 1} answerable queries: ")


def test_a_question_asked_twice_under_two_ids_is_said(bundled: LabelledSet) -> None:
    first = bundled.queries[0]
    again = first.model_copy(update={"id": "again", "query": "  " + first.query.upper().replace(" ", "\t")})
    (warning,) = _queries(bundled, *bundled.queries, again).warnings
    assert f"asked under more than one id, same text and category ({first.id!r} = 'again')" in warning
    elsewhere = again.model_copy(
        update={"category": "shipping" if first.category != "shipping" else "billing"}
    )
    assert _queries(bundled, *bundled.queries, elsewhere).warnings == ()


def test_two_chunks_with_one_text_graded_apart_are_said(bundled: LabelledSet) -> None:
    query = bundled.answerable[0]
    key = next(iter(query.relevant))
    original = next(c for c in bundled.corpus if c.evidence_key == key)
    copy = original.model_copy(update={"doc_id": "copy-of-it", "chunk_index": 0})
    twinned = bundled.model_copy(update={"corpus": (*bundled.corpus, copy)})
    (warning,) = validate_set(twinned).warnings
    assert f"(e.g. {key!r} and 'copy-of-it#0' by query {query.id!r})" in warning
    alike = tuple(
        q.model_copy(update={"relevant": {**q.relevant, "copy-of-it#0": q.relevant[key]}})
        if key in q.relevant
        else q
        for q in bundled.queries
    )
    assert validate_set(twinned.model_copy(update={"queries": alike})).warnings == ()


def test_a_set_with_no_unanswerable_query_is_said(bundled: LabelledSet) -> None:
    (warning,) = _queries(bundled, *bundled.answerable).warnings
    assert warning.startswith("no unanswerable query: ")


def _beir(base: Path, queries: list[dict[str, Any]], qrels: str, other_split: bool) -> Path:
    (base / "qrels").mkdir(parents=True)
    corpus = [{"_id": f"d{i}#0", "text": f"document {i}"} for i in range(40)]
    (base / "corpus.jsonl").write_text("".join(json.dumps(d) + "\n" for d in corpus))
    (base / "queries.jsonl").write_text("".join(json.dumps(q) + "\n" for q in queries))
    (base / "qrels" / "test.tsv").write_text("query-id\tcorpus-id\tscore\n" + qrels)
    if other_split:
        (base / "qrels" / "dev.tsv").write_text("query-id\tcorpus-id\tscore\nx1\td0#0\t1\n")
    return base


def _beir_queries(n: int) -> tuple[list[dict[str, Any]], str]:
    queries = [{"_id": f"q{i}", "text": f"question {i}"} for i in range(n)]
    queries.append({"_id": "none", "text": "nothing answers this", "metadata": {"kind": "unanswerable"}})
    return queries, "".join(f"q{i}\td{i}#0\t1\n" for i in range(n))


def test_what_the_beir_reader_left_out_or_took_as_unanswerable_is_said(tmp_path: Path) -> None:
    queries, qrels = _beir_queries(FEW_ANSWERABLE)
    assert load_beir_set(_beir(tmp_path / "sound", queries, qrels, other_split=True)).warnings == ()
    extra = [{"_id": "x1", "text": "judged in dev only"}, {"_id": "z", "text": "judged nowhere"}]
    zero = [{"_id": "zero", "text": "judged, nothing relevant"}]
    labelled = load_beir_set(
        _beir(tmp_path / "odd", queries + extra + zero, qrels + "zero\td1#0\t0\n", other_split=True)
    )
    left_out, unanswerable = labelled.warnings
    assert left_out.startswith(
        "2 queries of queries.jsonl are not judged by test.tsv and left out ('x1', 'z'; the other qrels "
        "here: dev.tsv)"
    )
    assert unanswerable.startswith("1 query is judged with nothing relevant (every score 0 or less) and ")
    assert "('zero')" in unanswerable
    assert [q.kind for q in labelled.queries if q.id == "zero"] == ["unanswerable"]


def test_a_slice_says_what_is_true_of_the_slice(tmp_path: Path, bundled: LabelledSet) -> None:
    small = slice_set(bundled, 12)
    (warning,) = small.warnings
    assert warning.startswith(f"only {len(small.answerable)} answerable queries")
    assert validate_set(small) is small  # validating again adds nothing
    queries, qrels = _beir_queries(FEW_ANSWERABLE)
    extra = [{"_id": "z", "text": "judged nowhere"}]
    read = load_beir_set(_beir(tmp_path / "set", queries + extra, qrels, other_split=False))
    (left_out,) = read.warnings
    assert slice_set(read, 5).warnings[0] == left_out  # the reader's words stay; the slice's are added
    assert slice_set(read, 5).warnings[1].startswith("only 4 answerable queries")
    assert slice_set(read, len(read.queries)).warnings == read.warnings


def test_the_upgrade_reads_the_warnings_of_the_slice_it_compares(tmp_path: Path) -> None:
    assert load_labelled_set(None).warnings == ()
    (warning,) = load_labelled_set(None, limit=6).warnings
    assert warning.startswith("only 5 answerable queries")


def test_evaluate_prints_the_warnings_before_it_starts(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    class StopHereError(Exception):
        pass

    def stop(*args: Any, **kwargs: Any) -> Any:
        raise StopHereError

    monkeypatch.setattr("reference.evaluation._cli.make_embedder", stop)
    beir = write_beir(load_jsonl_set(), tmp_path / "set")
    with pytest.raises(StopHereError):
        reference_main(["evaluate", "--beir", str(beir), "--limit", "7", "--out", str(tmp_path / "out")])
    err = capsys.readouterr().err
    assert "rag-reference: warning: only 6 answerable queries: " in err
    with pytest.raises(StopHereError):
        reference_main(["evaluate", "--out", str(tmp_path / "out")])
    assert "warning" not in capsys.readouterr().err

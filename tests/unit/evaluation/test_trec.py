"""The one TREC writer and reader: what is written is what ir_measures reads back, and an id a TREC
file cannot carry is refused rather than written as a line with the wrong number of fields."""

from __future__ import annotations

from pathlib import Path

import ir_measures
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from evaluation import TrecIdError, read_qrels, read_run, run_scores, write_qrels, write_run, write_trec

# Ids as trec_eval reads them: any printable characters but whitespace (so '#', quotes, unicode too).
token = st.text(
    st.characters(blacklist_categories=("Cs", "Cc", "Zs", "Zl", "Zp")), min_size=1, max_size=8
).filter(lambda s: not any(c.isspace() for c in s))
rankings = st.dictionaries(token, st.lists(token, max_size=6), min_size=1, max_size=5)
qrels = st.dictionaries(token, st.dictionaries(token, st.integers(0, 3), min_size=1, max_size=4), max_size=5)


@settings(max_examples=60, deadline=None)
@given(rankings=rankings)
def test_ir_measures_reads_a_written_run_back_identically(
    tmp_path_factory: pytest.TempPathFactory, rankings
) -> None:
    path = write_run(tmp_path_factory.mktemp("run") / "x.run", rankings, tag="t")
    expected = {q: run_scores(r) for q, r in rankings.items() if r}
    theirs: dict[str, dict[str, float]] = {}
    for doc in ir_measures.read_trec_run(str(path)):
        theirs.setdefault(doc.query_id, {})[doc.doc_id] = doc.score
    assert theirs == expected
    assert read_run(path) == expected


@settings(max_examples=60, deadline=None)
@given(labels=qrels)
def test_ir_measures_reads_written_qrels_back_identically(
    tmp_path_factory: pytest.TempPathFactory, labels
) -> None:
    path = write_qrels(tmp_path_factory.mktemp("qrels") / "qrels.txt", labels)
    theirs: dict[str, dict[str, int]] = {}
    for qrel in ir_measures.read_trec_qrels(str(path)):
        theirs.setdefault(qrel.query_id, {})[qrel.doc_id] = qrel.relevance
    expected = {q: g for q, g in labels.items() if g}
    assert theirs == expected
    assert read_qrels(path) == expected


@pytest.mark.parametrize("bad", ["q 1", "q\t1", "", "a\nb", "x\u00a0y"])
def test_an_id_a_trec_file_cannot_carry_is_refused_and_nothing_is_written(tmp_path: Path, bad: str) -> None:
    for qrels_, runs in (
        ({bad: {"d": 1}}, {}),
        ({"q": {bad: 1}}, {}),
        ({"q": {"d": 1}}, {"x.run": ("tag", {bad: ["d"]})}),
        ({"q": {"d": 1}}, {"x.run": ("tag", {"q": ["d", bad]})}),
    ):
        with pytest.raises(TrecIdError, match="cannot carry"):
            write_trec(tmp_path / "out", qrels_, runs)
        assert not (tmp_path / "out").exists()  # checked before anything is written


def test_the_reader_names_a_line_with_the_wrong_number_of_fields(tmp_path: Path) -> None:
    path = tmp_path / "x.run"
    path.write_text("q Q0 d 1 2 tag\nq Q0 d e 2 3 tag\n")
    with pytest.raises(Exception, match=r"x.run:2: 7 fields; a run"):
        read_run(path)


def test_a_callers_writer_writes_every_file(tmp_path: Path) -> None:
    written: dict[str, str] = {}
    paths = write_trec(
        tmp_path,
        {"q": {"d": 1}},
        {"x.run": ("t", {"q": ["d"]})},
        write=lambda p, t: written.update({p.name: t}),
    )
    assert [p.name for p in paths] == ["qrels.txt", "x.run"]
    assert written == {"qrels.txt": "q 0 d 1\n", "x.run": "q Q0 d 1 1 t\n"}
    assert not (tmp_path / "x.run").exists()  # the caller's writer did the writing

"""The TREC run and qrels files: their format, and that trec_eval reads them in the order measured."""

from __future__ import annotations

from pathlib import Path

import ir_measures
import pytest

from reference import EvalRun, Settings
from reference.evaluation._run import ModeOutcome, QueryOutcome, SourceInfo
from reference.evaluation._trec import QRELS_FILE, RUN_FILES, export_trec

# q1's labelled chunk sorts first by docid ("a" < "z") but is ranked second: a tool that ignored the
# written scores and broke ties by docid would give RR 1.0 instead of 0.5.
RANKINGS = {
    "q1": {"dense": ("z#0", "a#0", "m#1"), "hybrid": ("a#0", "z#0")},
    "q2": {"dense": ("m#1",), "hybrid": ()},
    "q3": {"dense": ("a#0", "z#0"), "hybrid": ("z#0",)},
}
LABELS = {"q1": {"a#0": 2, "m#1": 1}, "q2": {"z#0": 1}, "q3": {}}


def _mode(ranking: tuple[str, ...]) -> ModeOutcome:
    return ModeOutcome(
        path="unfiltered",
        retried=False,
        candidates=len(ranking),
        ranking=ranking,
        relevant_ranks={},
        evidence=(),
        top_quality_score=None,
        is_low_quality=True,
        relevance_level="NONE",
        metrics={},
    )


def _run() -> EvalRun:
    outcomes = tuple(
        QueryOutcome(
            id=qid,
            query=qid,
            kind="standard" if LABELS[qid] else "unanswerable",
            relevant=LABELS[qid],
            modes={mode: _mode(ranking) for mode, ranking in modes.items()},
        )
        for qid, modes in RANKINGS.items()
    )
    info = SourceInfo(path="synthetic", sha256="0" * 64, rows=3)
    return EvalRun(
        created="2026-01-01T00:00:00+00:00", version="test", embedder="none", engine="none",
        corpus=info, queries=info, categories=(), settings=Settings().as_dotted(),
        modes=("dense", "hybrid"), ks=(1, 5), label_check_depth=5, seconds={}, outcomes=outcomes,
    )  # fmt: skip


@pytest.fixture
def written(tmp_path: Path) -> Path:
    paths = export_trec(_run(), tmp_path)
    assert [p.name for p in paths] == [QRELS_FILE, RUN_FILES["dense"], RUN_FILES["hybrid"]]
    return tmp_path


def test_a_run_line_per_candidate_in_retrieval_order_with_falling_scores(written: Path) -> None:
    lines = [line.split() for line in (written / "dense.run").read_text().splitlines()]
    assert [(qid, q0, doc, rank, tag) for qid, q0, doc, rank, _, tag in lines] == [
        ("q1", "Q0", "z#0", "1", "rag-reference-dense"),
        ("q1", "Q0", "a#0", "2", "rag-reference-dense"),
        ("q1", "Q0", "m#1", "3", "rag-reference-dense"),
        ("q2", "Q0", "m#1", "1", "rag-reference-dense"),
        ("q3", "Q0", "a#0", "1", "rag-reference-dense"),
        ("q3", "Q0", "z#0", "2", "rag-reference-dense"),
    ]
    assert [float(line[4]) for line in lines] == [3, 2, 1, 1, 2, 1]
    # A query without candidates has no line; ir_measures then counts it 0, as the report does.
    assert "q2" not in (written / "hybrid.run").read_text()


def test_qrels_hold_the_labels_of_answerable_queries_only(written: Path) -> None:
    assert (written / "qrels.txt").read_text().splitlines() == [
        "q1 0 a#0 2",
        "q1 0 m#1 1",
        "q2 0 z#0 1",
    ]


def test_ir_measures_reads_the_files_in_the_order_retrieved(written: Path) -> None:
    run = _run()
    for mode in run.modes:
        qrels = list(ir_measures.read_trec_qrels(str(written / "qrels.txt")))
        scored = list(ir_measures.read_trec_run(str(written / RUN_FILES[mode])))
        per_query = {
            (m.query_id, str(m.measure)): m.value
            for m in ir_measures.iter_calc([ir_measures.RR], qrels, scored)
        }
        for qid, labels in LABELS.items():
            if not labels:
                continue
            ranking = RANKINGS[qid][mode]
            first = next((i for i, key in enumerate(ranking, start=1) if key in labels), None)
            assert per_query[(qid, "RR")] == (1 / first if first else 0.0), (mode, qid)


def test_a_set_of_one_chunk_per_document_uses_the_document_ids(tmp_path: Path) -> None:
    # As load_beir_set(chunks="document") makes it: the docid is the key without its chunk index.
    run = _run().model_copy(update={"trec_docids": "doc_id"})
    export_trec(run, tmp_path)
    assert [line.split()[2] for line in (tmp_path / "dense.run").read_text().splitlines()][:3] == [
        "z",
        "a",
        "m",
    ]
    assert (tmp_path / "qrels.txt").read_text().splitlines()[0] == "q1 0 a 2"

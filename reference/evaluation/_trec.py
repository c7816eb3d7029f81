"""The TREC run and qrels files of an evaluation, for ``trec_eval``, ``ir_measures`` and ``ranx``.

Written beside ``evaluation.json``:

- ``<mode>.run`` for each search mode, one line per candidate of the attempt the lookup used, in
  retrieval order: ``qid Q0 docid rank score tag``. The score counts down from the number of candidates
  to 1 (:func:`reference.evaluation._metrics.run_scores`): the tools order a run by score and break ties
  by docid, and RRF gives equal scores often, so the engine's own scores would not keep the order the
  metrics measured. The engine's scores of the accepted evidence are in ``evaluation.json``.
- ``qrels.txt``: ``qid 0 docid grade`` for every labelled chunk of every answerable query. Unanswerable
  queries have no line: nothing can be found for them, so no ranking measure is defined.

A docid is the id the labels use: the chunk's evidence key (``docId#chunkIndex``), or the document
id for a BEIR set read one chunk per document (the ``_id``, so the files go with the dataset's own
qrels and with other systems' runs on it). TREC files are
whitespace-separated, so an id with whitespace in it cannot be written: :func:`check_trec_ids` refuses
such a set before anything runs.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from pathlib import Path

from ._dataset import EvalSet, EvalSetError
from ._metrics import run_scores
from ._run import EvalRun, SearchMode

__all__ = ["QRELS_FILE", "RUN_FILES", "check_trec_ids", "ir_measures_command", "write_trec"]

RUN_FILES: dict[SearchMode, str] = {"dense": "dense.run", "hybrid": "hybrid.run"}
QRELS_FILE = "qrels.txt"
_SPACE = re.compile(r"\s")


def check_trec_ids(eval_set: EvalSet) -> None:
    """Refuse a set whose query ids or evidence keys a TREC file cannot hold (they contain whitespace)."""
    for what, ids, source in (
        ("query id", (q.id for q in eval_set.queries), eval_set.queries_source),
        ("evidence key", (c.evidence_key for c in eval_set.corpus), eval_set.corpus_source),
    ):
        bad = next((i for i in ids if _SPACE.search(i)), None)
        if bad is not None:
            raise EvalSetError(
                f"{what} {bad!r} holds whitespace, which TREC run and qrels files cannot carry; "
                "rename it without spaces, tabs or line breaks",
                source=source,
            )


def _docid(run: EvalRun) -> Callable[[str], str]:
    if run.trec_docids == "doc_id":
        return lambda key: key.rsplit("#", 1)[0]  # every chunk is chunk 0 of its document
    return lambda key: key


def _lines_of_run(run: EvalRun, mode: SearchMode) -> Iterable[str]:
    tag, docid = f"rag-reference-{mode}", _docid(run)
    for o in run.outcomes:
        for rank, (key, score) in enumerate(run_scores(o.modes[mode].ranking).items(), start=1):
            yield f"{o.id} Q0 {docid(key)} {rank} {score:g} {tag}\n"


def _lines_of_qrels(run: EvalRun) -> Iterable[str]:
    docid = _docid(run)
    for o in run.outcomes:
        for key, grade in o.relevant.items():
            yield f"{o.id} 0 {docid(key)} {grade}\n"


def write_trec(run: EvalRun, out_dir: str | Path) -> list[Path]:
    """Write ``qrels.txt`` and one run file per mode of ``run`` into ``out_dir``; returns their paths."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    written = [out / QRELS_FILE]
    written[0].write_text("".join(_lines_of_qrels(run)), encoding="utf-8")
    for mode in run.modes:
        path = out / RUN_FILES[mode]
        path.write_text("".join(_lines_of_run(run, mode)), encoding="utf-8")
        written.append(path)
    return written


def ir_measures_command(mode: SearchMode, names: Iterable[str]) -> str:
    """The ``ir_measures`` command line that recomputes the ranking row of ``mode`` from the files."""
    return f"ir_measures {QRELS_FILE} {RUN_FILES[mode]} {' '.join(names)}"

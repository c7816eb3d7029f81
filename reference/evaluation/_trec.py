"""The TREC run and qrels files of an evaluation, for ``trec_eval``, ``ir_measures`` and ``ranx``.

Written beside ``evaluation.json`` by the evaluation package's one writer (:func:`evaluation.write_trec`):

- ``<mode>.run`` for each search mode, one line per candidate of the attempt the lookup used, in
  retrieval order: ``qid Q0 docid rank score tag``, the score counting down (so the tools keep the
  order the metrics measured). The engine's scores of the accepted evidence are in ``evaluation.json``.
- ``qrels.txt``: ``qid 0 docid grade`` for every labelled chunk of every answerable query. Unanswerable
  queries have no line: nothing can be found for them, so no ranking measure is defined.

A docid is the id the labels use: the chunk's evidence key (``docId#chunkIndex``), or the document
id for a BEIR set read one chunk per document (the ``_id``, so the files go with the dataset's own
qrels and with other systems' runs on it). An id a TREC file cannot carry is refused when the set is
read, before anything runs.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

import evaluation as _shared

from ._run import EvalRun, SearchMode

__all__ = ["QRELS_FILE", "RUN_FILES", "export_trec", "ir_measures_command"]

RUN_FILES: dict[SearchMode, str] = {"dense": "dense.run", "hybrid": "hybrid.run"}
QRELS_FILE = _shared.QRELS_FILE


def export_trec(run: EvalRun, out_dir: str | Path) -> list[Path]:
    """Write ``qrels.txt`` and one run file per mode of ``run`` into ``out_dir``; returns their paths."""
    qrels = {o.id: o.relevant for o in run.outcomes if o.relevant}
    runs = {
        RUN_FILES[mode]: (f"rag-reference-{mode}", {o.id: o.modes[mode].ranking for o in run.outcomes})
        for mode in run.modes
    }
    return _shared.write_trec(
        out_dir, qrels, runs, docid=lambda key: _shared.trec_docid(key, run.trec_docids)
    )


def ir_measures_command(mode: SearchMode, names: Iterable[str]) -> str:
    """The ``ir_measures`` command line that recomputes the ranking row of ``mode`` from the files."""
    return _shared.ir_measures_command(RUN_FILES[mode], names)

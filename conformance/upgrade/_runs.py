"""``runs/``: the qrels and one TREC run per side and mode, for trec_eval, ir_measures and ranx.

The lines are the evaluation package's (:func:`evaluation.qrels_lines`, :func:`evaluation.run_lines`),
the ids the labelled set's TREC ids. Two things differ from ``rag-reference evaluate``'s files, because
here the ranking is what an implementation returned, not what the kit wrote:

- every id passes through the redactor: an adapter that echoes its token (``MILVUS_TOKEN``, a URI's
  password) into an evidence key does not leak it into a file a CI uploads;
- an id the implementation returned that the set does not have, and that a TREC file cannot carry
  (empty, or holding whitespace), is written percent-encoded (``doc%200#1``; the empty id as
  ``%22%22``), rather than refused after the whole evaluation ran or split into extra fields that
  trec_eval cannot read. The set's own ids are checked when it is read, so they never need it.

The texts are returned, not written: the caller writes them with the reports, atomically.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from urllib.parse import quote

import evaluation

from ..boundary._redact import redact
from ._labelled import upgrade_input
from ._sides import EngineEvaluation

__all__ = ["RUNS_DIR", "run_files", "trec_id"]

RUNS_DIR = "runs"
_NOT_A_TOKEN = re.compile(r"\s")
# Percent-encoding keeps what is printable and not whitespace; "%" itself is encoded so it reads back.
_KEEP = "".join(chr(c) for c in range(33, 127) if chr(c) != "%")


def trec_id(key: str) -> str:
    """``key`` as one field of a TREC line: redacted, and percent-encoded if it is empty or has spaces."""
    shown = redact(key)
    if shown and not _NOT_A_TOKEN.search(shown):
        return shown
    return quote(shown, safe=_KEEP) if shown else "%22%22"


def run_files(
    labelled: evaluation.LabelledSet, evaluations: Mapping[str, EngineEvaluation]
) -> dict[str, str]:
    """``runs/`` file name -> text: ``qrels.txt`` and ``<side>-<mode>.run`` for every mode that ran."""

    def docid(key: str) -> str:
        return trec_id(labelled.trec_docid(key))

    with upgrade_input():
        qrels = {trec_id(qid): grades for qid, grades in labelled.qrels().items()}
        texts = {evaluation.QRELS_FILE: "".join(evaluation.qrels_lines(qrels, docid=docid))}
        for side, e in evaluations.items():
            for mode, outcomes in e.outcomes.items():
                rankings = {trec_id(o.query_id): o.ranking for o in outcomes}
                texts[f"{side}-{mode}.run"] = "".join(
                    evaluation.run_lines(rankings, tag=f"{side}-{mode}", docid=docid)
                )
    return {f"{RUNS_DIR}/{name}": text for name, text in texts.items()}

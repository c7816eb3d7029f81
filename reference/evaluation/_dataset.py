"""The reference's door to labelled sets: the evaluation package's sets, under the reference's errors.

Reading, validating and writing a set (the JSON Lines files, a BEIR folder, the bundled set) is the
evaluation package's (:mod:`evaluation`), shared with the kit's upgrade check. Here the reference
re-raises its errors as its own (:class:`EvalSetError` is a :class:`reference.RetrievalQualityError`
and an :class:`evaluation.LabelledSetError`) and turns a set's chunks into the store's chunks, whose
own limits (sizes, NUL characters) are checked before any engine starts.
"""

from __future__ import annotations

import functools
import os
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import ParamSpec

from pydantic import ValidationError

import evaluation as _shared
from evaluation import KINDS, LabelledQuery, LabelledSet, QueryKind, TrecDocids

from .._errors import IngestError, RetrievalQualityError
from ..store._ingest import Chunk

__all__ = [
    "CHUNKINGS",
    "KINDS",
    "EvalQuery",
    "EvalSet",
    "EvalSetError",
    "EvaluationError",
    "QueryKind",
    "TrecDocids",
    "bundled_beir_path",
    "bundled_eval_paths",
    "load_beir_set",
    "load_eval_set",
    "store_chunks",
    "write_beir",
]

P = ParamSpec("P")
EvalSet = LabelledSet
EvalQuery = LabelledQuery
CHUNKINGS = _shared.CHUNKINGS


class EvaluationError(RetrievalQualityError, _shared.EvaluationError):
    """Root of the evaluation and calibration errors."""


class EvalSetError(EvaluationError, _shared.LabelledSetError):
    """A labelled set that cannot be used; the message names the file and line when there is one."""

    def __init__(
        self, message: str, *, source: str | None = None, line: int | None = None, item_id: str | None = None
    ) -> None:
        _shared.LabelledSetError.__init__(self, message, source=source, line=line, item_id=item_id)


@contextmanager
def reference_errors() -> Iterator[None]:
    """The evaluation package's errors raised as the reference's, with the same message and place."""
    try:
        yield
    except _shared.LabelledSetError as exc:
        raise EvalSetError(exc.reason, source=exc.source, line=exc.line, item_id=exc.item_id) from None
    except _shared.EvaluationError as exc:
        raise EvaluationError(str(exc)) from None


def bundled_eval_paths() -> tuple[Path, Path]:
    """The bundled set: (corpus.jsonl, queries.jsonl) under ``evaluation/data/``."""
    return _shared.bundled_jsonl_paths()


def bundled_beir_path() -> Path:
    """The bundled set in the BEIR layout (split ``test``), under ``evaluation/data/beir/``."""
    return _shared.bundled_beir_path()


def _under_reference_errors(read: Callable[P, LabelledSet], name: str) -> Callable[P, LabelledSet]:
    """``read`` (one of the evaluation package's readers) raising the reference's errors, its chunks
    checked against the store's limits, so that a set the store would refuse fails before any engine."""

    @functools.wraps(read)
    def reader(*args: P.args, **kwargs: P.kwargs) -> LabelledSet:
        with reference_errors():
            labelled = read(*args, **kwargs)
        store_chunks(labelled)
        return labelled

    # The reference's function (its name, its module), with the evaluation package's signature and words.
    reader.__module__, reader.__name__, reader.__qualname__ = __name__, name, name
    return reader


#: Read and cross-check a corpus and its queries in the JSON Lines format; either left out means the
#: bundled one (:func:`evaluation.load_jsonl_set`).
load_eval_set = _under_reference_errors(_shared.load_jsonl_set, "load_eval_set")
#: Read a BEIR-layout folder as a labelled set (:func:`evaluation.load_beir_set` has the rules).
load_beir_set = _under_reference_errors(_shared.load_beir_set, "load_beir_set")


def write_beir(eval_set: EvalSet, directory: str | os.PathLike[str], *, split: str = "test") -> Path:
    """Write ``eval_set`` as a BEIR folder (read back with ``chunks="keyed"`` it is the same set)."""
    return _shared.write_beir(eval_set, directory, split=split)


def store_chunks(eval_set: EvalSet) -> list[Chunk]:
    """The set's chunks as the store ingests them; a chunk the store would refuse is an EvalSetError."""
    out = []
    for c in eval_set.corpus:
        try:
            out.append(Chunk.model_validate(c.model_dump()))
        except IngestError as exc:
            raise EvalSetError(str(exc), source=eval_set.corpus_source) from None
        except ValidationError as exc:
            message = exc.errors()[0]["msg"]
            raise EvalSetError(f"chunk {c.evidence_key}: {message}", source=eval_set.corpus_source) from None
    return out

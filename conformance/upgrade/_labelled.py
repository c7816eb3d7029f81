"""The upgrade check's labelled set and its vectors, through the evaluation package.

The set is read in the BEIR layout by :func:`evaluation.load_beir_set` (the same reader and validator
as ``rag-reference evaluate --beir``); the bundled set is :func:`evaluation.bundled_beir_path`. It is
embedded with :class:`evaluation.WordLlamaEmbedder`, so both engines see the same vectors whatever the
adapter is. The evaluation package's errors become :class:`UpgradeInputError`, raised before any
engine starts: the validator's refusals (ids used twice, empty text, qrels naming unknown queries or
documents, no answerable query, bytes that are not UTF-8) name the file, the line and the id, and the
command exits 2. What is only suspicious is in the set's ``warnings`` (those of the slice, with
``limit``), for the result's ``warnings``.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from functools import cache
from pathlib import Path

import evaluation

from ..boundary._errors import ConformanceError

__all__ = ["EMBEDDER", "UpgradeInputError", "embed", "load_labelled_set", "upgrade_input"]

EMBEDDER = "wordllama l2_supercat, 256 dimensions"


class UpgradeInputError(ConformanceError):
    """The labelled set, the settings or the embedder cannot be used as given; the message says why."""


@contextmanager
def upgrade_input() -> Iterator[None]:
    """The evaluation package's errors as :class:`UpgradeInputError`, with the same words."""
    try:
        yield
    except evaluation.EvaluationError as exc:
        raise UpgradeInputError(str(exc)) from None


def load_labelled_set(
    directory: str | Path | None, *, split: str = "test", limit: int | None = None
) -> evaluation.LabelledSet:
    """The BEIR set at ``directory`` (None: the bundled set), at most ``limit`` queries of it, validated
    (the slice too: its ``warnings`` say what is true of the queries compared)."""
    with upgrade_input():
        base = Path(directory) if directory else evaluation.bundled_beir_path()
        name = str(directory) if directory else evaluation.BUNDLED_NAME
        labelled = evaluation.load_beir_set(base, split=split, name=name)
        return labelled if limit is None else evaluation.slice_set(labelled, limit)


def embed(texts: Sequence[str]) -> list[tuple[float, ...]]:
    """Unit-length 256-d wordllama vectors; a text the tokenizer leaves empty is the zero vector."""
    with upgrade_input():
        return _embedder().embed(texts)


@cache
def _embedder() -> evaluation.WordLlamaEmbedder:
    return evaluation.WordLlamaEmbedder()  # loaded once per process: the files are read from the wheel

"""The evaluation's errors: one root, one subclass per thing that can be wrong.

They derive from neither the reference's nor the kit's roots (the package imports neither side); each
side's command line catches :class:`EvaluationError` beside its own root, and the reference re-raises
them as its own classes where its callers expect those.
"""

from __future__ import annotations

__all__ = ["EmbedderUnavailableError", "EvaluationError", "LabelledSetError", "PlottingUnavailableError"]


class EvaluationError(Exception):
    """Root of every error of the evaluation package; the message says what to do."""


class LabelledSetError(EvaluationError):
    """A labelled set that cannot be used; the message names the file and line when there is one.

    ``source`` and ``line`` say where (the message starts ``FILE:LINE:``); ``item_id`` is the query or
    chunk id the problem is about, when it is about one (the message names it too).
    """

    def __init__(
        self, message: str, *, source: str | None = None, line: int | None = None, item_id: str | None = None
    ) -> None:
        self.source = source
        self.line = line
        self.item_id = item_id
        self.reason = message
        where = ""
        if source is not None:
            where = f"{source}:{line}: " if line is not None else f"{source}: "
        super().__init__(where + message)


class EmbedderUnavailableError(EvaluationError):
    """The embedding model is not installed or its files are missing; nothing is downloaded instead."""


class PlottingUnavailableError(EvaluationError):
    """matplotlib is not installed, so no PNG can be drawn."""

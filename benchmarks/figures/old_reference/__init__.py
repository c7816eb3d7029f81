"""The reference's hot path as it was before issue 25 made it read as the spec: the OLD version.

Issue 25 rewrote post-processing as plain code in the spec's order and had every model built through
pydantic's public API, where the tuned code built models by setting pydantic's private instance state
(``trusted``) and dropped candidates through ``tuple.__new__``. To make the cost of that change a figure
of one run rather than a guess, the benchmarks time the old code beside the new, interleaved:

- ``post_process`` of the old version beside the new one (figure 3);
- ``lookup_old``: ``reference.lookup_knowledge`` itself, with the four functions the change rewrote
  swapped for their old versions for the length of the call (:func:`call_old`).

The modules here are frozen copies of git 02ce19c, changed only in their imports:
``postprocess`` (``reference/_postprocess.py``), ``hits`` (``reference/store/_hits.py``), ``lookup``
(``_result`` of ``reference/_lookup.py``), ``models`` (``trusted`` and ``trusted_all`` of
``reference/_models.py``) and ``quality`` (``normalize_all`` of ``reference/_quality.py``). The reference
never imports them; ``tests/unit/benchmarks/figures/test_old_reference.py`` checks that they still give
what the reference gives, so the comparison is of the same work.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

import reference._lookup
import reference.store._store

from . import hits, lookup, postprocess

__all__ = ["OLD_COMMIT", "SWAPPED", "call_old", "post_process"]

OLD_COMMIT = "02ce19c"
post_process = postprocess.post_process
_T = TypeVar("_T")

# (module that calls it, the name it calls, the old version): what call_old swaps.
SWAPPED: tuple[tuple[Any, str, Callable[..., Any]], ...] = (
    (reference.store._store, "hybrid_hits", hits.hybrid_hits),
    (reference.store._store, "candidates", hits.candidates),
    (reference._lookup, "post_process", postprocess.post_process),
    (reference._lookup, "_result", lookup._result),
)


def call_old(call: Callable[[], _T]) -> _T:
    """``call()`` with the old versions of :data:`SWAPPED` in place; the new ones are back after.

    Eight attribute writes around the call: well under a microsecond, against milliseconds a lookup.
    """
    saved = [getattr(module, name) for module, name, _ in SWAPPED]  # a renamed one fails here, loudly
    for module, name, old in SWAPPED:
        setattr(module, name, old)
    try:
        return call()
    finally:
        for (module, name, _), new in zip(SWAPPED, saved, strict=True):
            setattr(module, name, new)

"""``reference/_lookup.py``'s ``_result`` as it was at git 02ce19c, before issue 25 (made by ``trusted``).

The old version, frozen for comparison only (see :mod:`benchmarks.figures.old_reference`): copied
unchanged but for the imports. Nothing of the reference imports it.
"""

from __future__ import annotations

from reference._lookup import LookupPath, LookupResult
from reference._models import Candidate, PostProcessResult

from .models import trusted

__all__ = ["_result"]

_NO_FILTERED = frozenset({"filtered_result"})


def _result(
    path: LookupPath,
    result: PostProcessResult,
    candidates: list[Candidate],
    *,
    filtered: PostProcessResult | None = None,
) -> LookupResult:
    values = {
        "path": path,
        "retried": filtered is not None,
        "result": result,
        "filtered_result": filtered,
        "candidates": tuple(candidates),
    }
    return trusted(LookupResult, values, unset=_NO_FILTERED if filtered is None else frozenset())

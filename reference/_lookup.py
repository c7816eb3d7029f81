"""``lookup_knowledge``: search, post-process, and the category-filter low-quality retry."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal

from ._models import Candidate, L0Hints, PostProcessResult, _Model
from ._postprocess import post_process
from ._settings import Settings
from .store._store import MilvusKnowledgeStore, SearchMode

__all__ = ["LookupPath", "LookupResult", "lookup_knowledge"]

LookupPath = Literal["unfiltered", "filtered", "unfiltered_retry"]


class LookupResult(_Model):
    """What ``lookup_knowledge`` did and the evidence it settled on.

    ``path`` is ``unfiltered`` when no category was given, ``filtered`` when the category-filtered result
    was good enough, and ``unfiltered_retry`` when it was low quality and the unfiltered retry was used.
    ``result`` and ``candidates`` belong to the attempt that is used; ``filtered_result`` keeps the first
    (filtered) attempt when a retry ran, so callers can see why it did.
    """

    path: LookupPath
    retried: bool
    result: PostProcessResult
    filtered_result: PostProcessResult | None = None
    candidates: tuple[Candidate, ...]


def lookup_knowledge(
    store: MilvusKnowledgeStore,
    query_text: str,
    query_vector: Sequence[float],
    *,
    settings: Settings | None = None,
    category: str | None = None,
    hints: L0Hints | None = None,
    mode: SearchMode | None = None,
) -> LookupResult:
    """Retrieve ``rag.retrieve-k`` candidates and post-process them into evidence.

    ``settings`` defaults to the store's; ``mode`` to ``retrieval.search.mode``. With a ``category``,
    the first search is filtered to it; if that result is low quality (decided by the top
    ``qualityScore`` alone, see :func:`reference.post_process`), exactly one unfiltered search runs and
    its result is used, whatever its quality. One engine search per attempt, so at most two per lookup.
    """
    settings = settings or store.settings
    mode = mode or settings.search_mode

    def attempt(filter_category: str | None) -> tuple[list[Candidate], PostProcessResult]:
        candidates = store.search(
            query_text,
            query_vector,
            mode=mode,
            k=settings.retrieve_k,
            category=filter_category,
            rrf_k=settings.rrf_k,
        )
        return candidates, post_process(candidates, settings, hints=hints)

    if category is None:
        candidates, result = attempt(None)
        return _result("unfiltered", result, candidates)

    candidates, result = attempt(category)
    if not result.is_low_quality:
        return _result("filtered", result, candidates)

    retry_candidates, retry_result = attempt(None)
    return _result("unfiltered_retry", retry_result, retry_candidates, filtered=result)


def _result(
    path: LookupPath,
    result: PostProcessResult,
    candidates: list[Candidate],
    *,
    filtered: PostProcessResult | None = None,
) -> LookupResult:
    # The parts are models already: pydantic takes them as they are, without validating them again.
    if filtered is None:  # left unset, not set to None: a dump without unset fields leaves it out
        return LookupResult(path=path, retried=False, result=result, candidates=tuple(candidates))
    return LookupResult(
        path=path, retried=True, result=result, filtered_result=filtered, candidates=tuple(candidates)
    )

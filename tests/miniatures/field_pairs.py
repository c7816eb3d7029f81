"""Faults that only one request beside another shows, a falsy setting, a mixed batch or a reply's wire
values (issue 44's escapes), and the conforming variants the kit must still pass beside them.

Every run now asks, after its one ``prepare``, requests that differ from a base in one field, in both
orders (``one_field_pairs``); post-process batches that mix labels; settings of 0.0 where the answer
differs from any default; each gate's boundary crossed. Each fault here is a
:class:`~tests.miniatures.from_the_spec.FromTheSpec` with one step replaced; its docstring quotes the
spec's words it breaks. The caches and memos keyed on the whole question conform.
"""

from __future__ import annotations

from typing import Any, ClassVar

from conformance.adapters.reference import store_search
from conformance.boundary._protocol import (
    LookupReply,
    LookupRequest,
    PostProcessConfig,
    PostProcessReply,
    PostProcessRequest,
    QualityRequest,
    SearchRequest,
)
from tests.miniatures.from_the_spec import FromTheSpec, Scored
from tests.miniatures.input_classes import CachedSearch
from tests.miniatures.spec_freedoms import HybridDenseProbeDistance

__all__ = [
    "GroupsByLabelBeforeRank",
    "LookupMemoWithoutSettings",
    "MemoOnWholeQuestion",
    "QualityAsText",
    "QualityMemoWithoutMaxL2",
    "SearchCacheWithoutCategory",
    "SearchCacheWithoutText",
    "SearchCacheWithoutVector",
    "ThresholdOrDefault",
    "TrimsCategory",
    "TruncatedKeywordQuery",
    "ZeroDistanceAsMissing",
]


# -- one field at a time: caches and memos keyed without one field -------------------------------------


class _SearchCacheWithout(CachedSearch):
    """Memoizes engine searches on the request without :attr:`left_out` (dropped on each prepare)."""

    left_out: ClassVar[str]

    def cache_key(self, request: SearchRequest) -> str:
        return request.model_dump_json(exclude={self.left_out})


class SearchCacheWithoutVector(_SearchCacheWithout):
    """dense-baseline: "runs dense ANN only" (the query's nearest neighbours), and score-labels: "hit order
    SHALL follow the hybrid/RRF result order". The search cache's key is every field but the query
    vector: a search that differs from an earlier one only in its vector gets the earlier one's hits.
    """

    left_out = "query_vector"


class SearchCacheWithoutText(_SearchCacheWithout):
    """score-labels: "hit order SHALL follow the hybrid/RRF result order". The cache's key leaves out the
    query text: a hybrid search asking BM25 another text gets the earlier text's fused hits."""

    left_out = "query_text"


class SearchCacheWithoutCategory(_SearchCacheWithout):
    """quality-gates (the category filter, readings 18): the cache's key leaves out the category, so a
    filtered search after the same unfiltered one gets hits of every category."""

    left_out = "category"


class QualityMemoWithoutMaxL2(FromTheSpec):
    """single-normalizer: "`qualityScore` SHALL equal `max(0, 1 - min(d, maxL2Distance) / maxL2Distance)`".
    The normalizer memoizes on label, score, rank and batch size, not ``maxL2Distance``: the same distance
    under another maxL2Distance gets the earlier quality."""

    def __init__(self) -> None:
        super().__init__()
        self._memory: dict[tuple[Any, ...], float] = {}

    def quality(
        self, label: str, score: float | None, *, rank: int, batch: int, max_l2: float, **kw: Any
    ) -> float:
        key = (label, score, rank, batch, kw.get("dense_distance"))
        if key not in self._memory:
            self._memory[key] = super().quality(label, score, rank=rank, batch=batch, max_l2=max_l2, **kw)
        return self._memory[key]


class LookupMemoWithoutSettings(FromTheSpec):
    """rank-order: "`rag.return-n` SHALL still bound total blocks", and the gates' thresholds. Lookups are
    memoized on what reaches the search (text, vector, mode, category, retrieve-k, RRF k) and the hints,
    not the post-process settings: the same search under other settings gets the earlier evidence."""

    def __init__(self) -> None:
        super().__init__()
        self._memory: dict[str, LookupReply] = {}

    def lookup(self, request: LookupRequest) -> LookupReply:
        key = request.model_dump_json(exclude={"config"})
        if key not in self._memory:
            self._memory[key] = super().lookup(request)
        return self._memory[key]


class MemoOnWholeQuestion(FromTheSpec):
    """Conforms. Memoizes post-process replies and lookups on the whole question (and drops the lookups'
    memory on each prepare): the same question asked again gets the same answer; any field that differs
    is another question. (Engine searches: :class:`~tests.miniatures.input_classes.CachedSearch`.)"""

    def __init__(self) -> None:
        super().__init__()
        self._posts: dict[str, PostProcessReply] = {}
        self._lookups: dict[str, LookupReply] = {}

    def prepare(self, endpoint: Any, corpus: Any) -> None:
        self._lookups.clear()
        super().prepare(endpoint, corpus)

    def post_process(self, request: PostProcessRequest) -> PostProcessReply:
        key = request.model_dump_json()
        if key not in self._posts:
            self._posts[key] = super().post_process(request)
        return self._posts[key]

    def lookup(self, request: LookupRequest) -> LookupReply:
        key = request.model_dump_json()
        if key not in self._lookups:
            self._lookups[key] = super().lookup(request)
        return self._lookups[key]


# -- falsy settings and gate boundaries ---------------------------------------------------------------


class ThresholdOrDefault(FromTheSpec):
    """quality-gates: "low-quality detection SHALL compare the top `qualityScore` to the configured
    reference threshold". Settings are read as ``value or default`` (Python's ``or``, JavaScript's
    ``||``): a reference threshold of 0.0 becomes 0.5, a highly-relevant one of 0.0 becomes 0.75."""

    def assemble(self, candidates: Any, config: PostProcessConfig, hints: Any, **kw: Any) -> PostProcessReply:
        defaults = {
            "reference_threshold": config.reference_threshold or 0.5,
            "highly_relevant_threshold": config.highly_relevant_threshold or 0.75,
        }
        return super().assemble(candidates, config.model_copy(update=defaults), hints, **kw)


class ZeroDistanceAsMissing(FromTheSpec):
    """single-normalizer: "`qualityScore` SHALL equal `max(0, 1 - min(d, maxL2Distance) / maxL2Distance)`
    (null score → 0)". The normalizer tests the distance for truth (``if not d``): a distance of exactly
    0.0 is read as null, quality 0 instead of 1."""

    def l2_quality(self, distance: float | None, max_l2: float) -> float:
        return super().l2_quality(distance or None, max_l2)


# -- mixed batches ---------------------------------------------------------------------------------------


class GroupsByLabelBeforeRank(FromTheSpec):
    """rank-order: "Evidence post-processing SHALL order candidates by `originalRank` ascending". Candidates
    are grouped by canonical label (hybrid first, then dense) and ordered by rank within each group: right
    for every batch of one label, wrong for a batch that mixes them."""

    def order(self, scored: list[Scored], hints: Any) -> list[Scored]:
        def key(s: Scored) -> tuple[bool, int]:
            return self.canonicalize_label(s.candidate.score_label) != "hybrid", s.candidate.original_rank

        return sorted(scored, key=key)


# -- categories --------------------------------------------------------------------------------------------


class TrimsCategory(FromTheSpec):
    """quality-gates (the category filter, readings 18): the category is trimmed of leading and trailing
    spaces before the filter, so a category stored as " padded " finds none of its chunks."""

    def engine_search(self, request: SearchRequest) -> list[Any]:
        if request.category is not None:
            request = request.model_copy(update={"category": request.category.strip()})
        return super().engine_search(request)


# -- attribution: what BM25 is asked ----------------------------------------------------------------------


class TruncatedKeywordQuery(HybridDenseProbeDistance):
    """score-labels: "hit order SHALL follow the hybrid/RRF result order". BM25 is asked the query text cut
    to its first 12 characters (a length limit meant for something else); the dense leg and the fusion
    are right, and the hits carry a dense probe's distance (a freedom, R7). Its fault is in the query,
    R1's, not in how denseDistance is used."""

    def engine_search(self, request: SearchRequest) -> list[Any]:
        if request.mode != "hybrid":
            return super().engine_search(request)
        cut = request.model_copy(update={"query_text": request.query_text[:12]})
        hits = store_search(self._prepared(), cut)
        probe = store_search(self._prepared(), request.model_copy(update={"mode": "dense"}))
        distance = {(p.doc_id, p.chunk_index): p.score for p in probe}
        return [
            h.model_copy(update={"dense_distance": distance.get((h.doc_id, h.chunk_index))}) for h in hits
        ]


# -- wire values --------------------------------------------------------------------------------------------


class QualityAsText(FromTheSpec):
    """single-normalizer: "The pipeline SHALL compute a `qualityScore` in `[0, 1]`". The normalizer answers
    the number as text (``"0.5"``, and ``"NaN"`` for a missing distance), as a program that formats its
    numbers would; post-process blocks carry the same text."""

    def quality_score(self, request: QualityRequest) -> Any:
        if request.score is None and request.dense_distance is None and request.score_label == "dense":
            return "NaN"
        return str(super().quality_score(request))

    def post_process(self, request: PostProcessRequest) -> Any:
        data = super().post_process(request).model_dump(by_alias=True)
        for block in data["blocks"]:
            block["qualityScore"] = str(block["qualityScore"])
        return data


class ChunkIndexAsText(FromTheSpec):
    """score-labels and rank-order: which chunk a hit or a block is. The program passes on the chunk index
    as the Node SDK hands an Int64 over, as text (``"0"``): search hits and evidence blocks carry it so.
    FAILED under the identity rules with the wire error (readings 23), not ERRORED: the seventh fresh set's
    Node program was ERRORED on every search and failed only under R4's evidence identity."""

    def search(self, request: SearchRequest) -> Any:
        data = super().search(request).model_dump(by_alias=True)
        for hit in data["hits"]:
            hit["chunkIndex"] = str(hit["chunkIndex"])
        return data

    def lookup(self, request: LookupRequest) -> Any:
        data = super().lookup(request).model_dump(by_alias=True)
        for block in data["blocks"]:
            block["chunkIndex"] = str(block["chunkIndex"])
        return data

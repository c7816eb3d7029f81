"""The one call site: every question goes through :class:`Judge`, and every reply through the model.

A scenario's own Then steps check what the scenario is about; the judge checks everything else the spec
fixes about the same reply, whatever the scenario's focus, so a violation fails the scenario that saw it
and names the requirement it breaks (:class:`~conformance._model.SpecViolationError`). Reply fields the
protocol does not define are noted for the report, never failed.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from typing import TYPE_CHECKING, Any

import pytest
from pydantic import BaseModel

from . import _model as model
from ._calls import ask
from ._errors import ConformanceError
from ._protocol import (
    Implementation,
    ImplementationInfo,
    LookupReply,
    LookupRequest,
    PostProcessReply,
    PostProcessRequest,
    QualityRequest,
    SearchReply,
    SearchRequest,
    WireCandidate,
)
from ._skip import require_mode

if TYPE_CHECKING:
    from ._oracle import MilvusOracle

__all__ = ["NOTES", "Judge", "lookup_truth", "search_truth"]

NOTES = pytest.StashKey[list[str]]()
"""Per test item: what the judge noticed that is reported but never failed (extra reply fields)."""


class Judge:
    """Asks the implementation and checks the whole reply against the executable model of the spec.

    ``oracle`` and ``recorder`` are callables returning the session's oracle and recording proxy; they
    are called only by search and lookup, so pure scenarios never start Milvus.
    """

    def __init__(
        self,
        implementation: Implementation,
        info: ImplementationInfo,
        *,
        oracle: Callable[[], MilvusOracle] | None = None,
        recorder: Callable[[], Any] | None = None,
        notes: list[str] | None = None,
    ) -> None:
        self.implementation = implementation
        self.info = info
        self._oracle = oracle
        self._recorder = recorder
        self.notes = notes if notes is not None else []

    # -- pure capabilities ---------------------------------------------------------------------------

    def canonicalize_label(self, label: str) -> str:
        answer: str = ask(self.implementation, "canonicalize_label", label, expect=str)
        self._verdict("canonicalize_label", model.check_label(label, answer))
        return answer

    def quality_score(self, request: QualityRequest) -> float:
        answer: float = ask(self.implementation, "quality_score", request, expect=float)
        found = model.check_quality(request, answer)
        if found and _is_alias(request.score_label):
            # Wrong for an alias: is it the alias (right for the canonical label) or the formula itself?
            canonical = request.model_copy(update={"score_label": model.canonical(request.score_label)})
            again: float = ask(self.implementation, "quality_score", canonical, expect=float)
            if not model.check_quality(canonical, again):
                found = _blame_alias(found)
        self._verdict("quality_score", found)
        return answer

    def post_process(self, request: PostProcessRequest) -> PostProcessReply:
        reply: PostProcessReply = ask(self.implementation, "post_process", request, expect=PostProcessReply)
        self._note_extras("post_process", reply)
        normalizer = self._normalizer()
        found = model.check_post_process(request.candidates, request.config, reply, normalizer=normalizer)
        if found and any(_is_alias(c.score_label) for c in request.candidates):
            canonical = request.model_copy(
                update={
                    "candidates": tuple(
                        c.model_copy(update={"score_label": model.canonical(c.score_label) or c.score_label})
                        for c in request.candidates
                    )
                }
            )
            again = ask(self.implementation, "post_process", canonical, expect=PostProcessReply)
            if not model.check_post_process(
                canonical.candidates, canonical.config, again, normalizer=normalizer
            ):
                found = _blame_alias(found)
        self._verdict("post_process", found)
        return reply

    # -- Milvus-backed -------------------------------------------------------------------------------

    def search(self, request: SearchRequest) -> tuple[SearchReply, tuple[Any, ...]]:
        """The reply and the engine calls the implementation made for it."""
        require_mode(self.info, "search", request.mode)
        self._need_oracle().require_mode(request.mode)  # an engine without BM25 serves no hybrid mode
        with self._recording() as calls:
            reply: SearchReply = ask(self.implementation, "search", request, expect=SearchReply)
        self._note_extras("search", reply)
        found = model.check_search(request, reply, search_truth(self._need_oracle(), request))
        if request.mode == "dense":
            found += model.check_dense_only(calls, "the engine calls of a dense-mode search")
        self._verdict("search", found)
        return reply, tuple(calls)

    def lookup(self, request: LookupRequest) -> tuple[LookupReply, tuple[Any, ...]]:
        """The reply and the engine calls the implementation made for it."""
        require_mode(self.info, "lookup", request.mode)
        self._need_oracle().require_mode(request.mode)
        with self._recording() as calls:
            reply: LookupReply = ask(self.implementation, "lookup", request, expect=LookupReply)
        self._note_extras("lookup", reply)
        found = model.check_lookup(request, reply, lookup_truth(self._need_oracle(), request))
        if request.mode == "dense":
            found += model.check_dense_only(calls, "the engine calls of a dense-mode lookup")
        if found:
            # Evidence built on a broken search or post-process breaks those first: say that.
            found = self._component_faults(request) or found
        self._verdict("lookup", found)
        return reply, tuple(calls)

    def _component_faults(self, request: LookupRequest) -> list[model.Violation]:
        """What the implementation's own search and post-process (where declared) break for this lookup.

        Asked only after a lookup failed, so a conforming implementation pays nothing for it.
        """
        found = self._search_faults(request) if self.info.supports("search", request.mode) else []
        if found or not self.info.supports("post_process"):
            return found
        truth = lookup_truth(self._need_oracle(), request)
        for attempt in (truth.filtered, truth.unfiltered):
            if attempt is None:
                continue
            ask_request = PostProcessRequest(
                candidates=attempt.candidates, hints=request.hints, config=request.config
            )
            reply = ask(self.implementation, "post_process", ask_request, expect=PostProcessReply)
            faults = model.check_post_process(
                attempt.candidates, request.config, reply, normalizer=self._normalizer()
            )
            if faults:
                return _under("the post-process under this lookup", faults)
        return []

    def _search_faults(self, request: LookupRequest) -> list[model.Violation]:
        """What the implementation's own search breaks for the searches this lookup makes."""
        for category in dict.fromkeys((request.category, None)):
            search = request.search(category)
            with self._recording() as calls:
                reply: SearchReply = ask(self.implementation, "search", search, expect=SearchReply)
            found = model.check_search(search, reply, search_truth(self._need_oracle(), search))
            if request.mode == "dense":
                found += model.check_dense_only(calls, "the engine calls of a dense-mode search")
            if found:
                return _under("the search under this lookup", found)
        return []

    # -- helpers -------------------------------------------------------------------------------------

    def _normalizer(self) -> model.Normalizer | None:
        """The implementation's own normalizer, asked without judging (post-process blames the block)."""
        if not self.info.supports("quality"):
            return None

        def normalizer(request: QualityRequest) -> float:
            answer: float = ask(self.implementation, "quality_score", request, expect=float)
            return answer

        return normalizer

    def _need_oracle(self) -> MilvusOracle:
        if self._oracle is None:
            raise RuntimeError("kit bug: a Milvus-backed question without the oracle")
        return self._oracle()

    def _recording(self) -> _Recording:
        return _Recording(self._recorder() if self._recorder is not None else None)

    @staticmethod
    def _verdict(operation: str, found: Sequence[model.Violation]) -> None:
        if found:
            raise model.SpecViolationError(operation, found)

    def _note_extras(self, operation: str, reply: BaseModel) -> None:
        extra = sorted(set(_extra_fields(reply)))
        if extra:
            note = f"{operation} reply carried fields the protocol does not define: {', '.join(extra)}"
            if note not in self.notes:
                self.notes.append(note)


def _under(where: str, found: Sequence[model.Violation]) -> list[model.Violation]:
    return [model.Violation(v.rule, f"{where}: {v.item}", v.expected, v.actual) for v in found]


def _is_alias(label: str) -> bool:
    canonical = model.canonical(label)
    return canonical is not None and canonical != label


def _blame_alias(found: Sequence[model.Violation]) -> list[model.Violation]:
    """The same findings, attributed to canonicalization: the canonical labels alone conform."""
    rule = model.RULES["alias-quality"]
    return [model.Violation(rule, v.item, v.expected, f"{v.actual} (as {v.rule.id})") for v in found]


class _Recording:
    """``with`` block collecting what the recording proxy saw during one call (nothing without a proxy)."""

    def __init__(self, proxy: Any) -> None:
        self._proxy = proxy
        self._calls: list[Any] = []

    def __enter__(self) -> list[Any]:
        self._mark = self._proxy.mark() if self._proxy is not None else 0
        return self._calls

    def __exit__(self, *exc: object) -> None:
        if self._proxy is not None:
            self._calls.extend(self._proxy.calls_since(self._mark))


def _extra_fields(value: Any, path: str = "") -> Iterator[str]:
    if isinstance(value, BaseModel):
        for name in value.model_extra or {}:
            yield f"{path}{name}"
        for name in type(value).model_fields:
            yield from _extra_fields(getattr(value, name), f"{path}{name}.")
    elif isinstance(value, tuple | list):
        for item in value:
            yield from _extra_fields(item, path.rstrip(".") + "[].")


# -- what the oracle knows about a question ------------------------------------------------------------


def search_truth(oracle: MilvusOracle, request: SearchRequest) -> model.SearchTruth:
    """The oracle's answer to ``request``: expected hits with their scores, and every chunk's L2."""
    distances = oracle.l2(request.query_vector)
    if request.mode == "dense":
        ranked = oracle.l2_order(request.query_vector, request.category)[: request.k]
        return model.SearchTruth(tuple(model.Expected(r.key, r.score) for r in ranked), distances)
    fused = oracle.rrf(
        request.query_vector, request.query_text, request.k, rrf_k=request.rrf_k, category=request.category
    )
    dense = {r.key for r in oracle.dense_search(request.query_vector, request.k, request.category)}
    return model.SearchTruth(
        tuple(model.Expected(r.key, r.score) for r in fused),
        distances,
        frozenset(r.key for r in fused) - dense,
    )


def lookup_truth(oracle: MilvusOracle, request: LookupRequest) -> model.LookupTruth:
    """The candidates each attempt of ``request`` gets from a conforming search, as post-process input."""

    def attempt(category: str | None) -> model.Attempt:
        search = request.search(category)
        truth = search_truth(oracle, search)
        if any(end - start > 1 for start, end in model.tie_groups(truth.ranking)):
            # Engines order tied chunks differently, so a tie makes originalRank ambiguous.
            raise ConformanceError(f"kit bug: the lookup question {request.query_text!r} has tied hits")
        candidates = []
        for rank, expected in enumerate(truth.ranking, start=1):
            chunk = oracle.corpus.chunk(expected.key)
            distance = truth.distances[expected.key]
            candidates.append(
                WireCandidate(
                    doc_id=chunk.doc_id,
                    chunk_index=chunk.chunk_index,
                    text=chunk.text,
                    original_rank=rank,
                    score=expected.score,
                    score_label=request.mode,
                    dense_distance=distance if request.mode == "hybrid" else None,
                    category=chunk.category,
                    source_type=chunk.source_type,
                )
            )
        return model.Attempt(category, tuple(candidates))

    filtered = attempt(request.category) if request.category is not None else None
    return model.LookupTruth(unfiltered=attempt(None), filtered=filtered)

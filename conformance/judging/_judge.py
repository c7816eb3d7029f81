"""The one call site: every question goes through :class:`Judge`, and every reply through the model.

A scenario's own Then steps check what the scenario is about; the judge checks everything else the spec
fixes about the same reply, whatever the scenario's focus, so a violation fails the scenario that saw it
and names the requirement it breaks (:class:`~conformance.judging._spec_model.SpecViolationError`).
Findings of rules the spec's words do not back (the protocol's shapes), and reply fields the protocol
does not define, are noted for the report, never failed. When a reply breaks a rule, the judge finds
which input's influence broke it (:mod:`conformance.judging._attribution`) and counts the failure there.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator, Sequence
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel

from ..boundary._asking import ask
from ..boundary._decline import require_mode
from ..boundary._describe import describe_call
from ..boundary._errors import AdapterCallError, ConformanceError
from ..boundary._protocol import (
    Implementation,
    ImplementationInfo,
    LookupReply,
    LookupRequest,
    PostProcessReply,
    PostProcessRequest,
    QualityRequest,
    SearchReply,
    SearchRequest,
)
from . import _spec_model as model
from ._attribution import CATEGORY, every_chunk, reattribute, variations
from ._engine_calls import Recording, ask_through_engine
from ._retry_terms import own_low_quality
from ._truth import fusions, hybrid_alternatives, lookup_truth, search_truth
from ._wire_values import judged_numbers

if TYPE_CHECKING:
    from ._oracle import MilvusOracle

__all__ = ["Judge"]


class Judge:
    """Asks the implementation and checks the whole reply against the executable model of the spec.

    ``oracle`` and ``recorder`` are callables returning the session's oracle and recording proxy; they
    are called only by search and lookup, so pure scenarios never start Milvus. ``advice`` collects
    run-level findings that conform but defeat the spec's purpose (see :mod:`conformance.judging._advice`).
    """

    def __init__(
        self,
        implementation: Implementation,
        info: ImplementationInfo,
        *,
        oracle: Callable[[], MilvusOracle] | None = None,
        recorder: Callable[[], Any] | None = None,
        notes: list[str] | None = None,
        observe: Callable[[str, Any, Any], None] | None = None,
        memory: dict[str, Any] | None = None,
    ) -> None:
        self.implementation = implementation
        self.info = info
        self._oracle = oracle
        self._recorder = recorder
        self.notes = notes if notes is not None else []
        self._observe = observe
        self._memory = memory if memory is not None else {}  # what the run learnt once, for every judge

    # -- pure capabilities ---------------------------------------------------------------------------

    def canonicalize_label(self, label: str) -> str:
        answer: str = ask(self.implementation, "canonicalize_label", label)
        self._verdict("canonicalize_label", model.check_label(label, answer), label)
        return answer

    def quality_score(self, request: QualityRequest) -> float:
        with judged_numbers(self._verdict, "quality_score", request):
            answer: float = ask(self.implementation, "quality_score", request)
        self._seen("quality_score", request, answer)
        found = model.check_quality(request, answer)
        if model.failing(found):
            # Wrong for an alias: is it the alias (right for the canonical label) or the formula itself?
            found = self._attribute(request, found, self._quality_conforms)
        self._verdict("quality_score", found, request)
        return answer

    def _quality_conforms(self, request: QualityRequest) -> bool:
        answer: float = ask(self.implementation, "quality_score", request)
        return not model.failing(model.check_quality(request, answer))

    def post_process(self, request: PostProcessRequest) -> PostProcessReply:
        with judged_numbers(self._verdict, "post_process", request):
            reply = self._post_process_reply(request)
            found = self._check_post_process(request, reply)
        if model.failing(found):
            found = self._attribute(request, found, self._post_process_conforms)
        self._verdict("post_process", found, request)
        return reply

    def _post_process_reply(self, request: PostProcessRequest) -> PostProcessReply:
        reply: PostProcessReply = ask(self.implementation, "post_process", request)
        self._note_extras("post_process", reply)
        self._seen("post_process", request, reply)
        return reply

    def _check_post_process(
        self, request: PostProcessRequest, reply: PostProcessReply
    ) -> list[model.Violation]:
        return model.check_post_process(
            request.candidates, request.config, reply, normalizer=self._normalizer()
        )

    def _post_process_conforms(self, request: PostProcessRequest) -> bool:
        reply: PostProcessReply = ask(self.implementation, "post_process", request)
        return not model.failing(self._check_post_process(request, reply))

    # -- Milvus-backed -------------------------------------------------------------------------------

    def search(self, request: SearchRequest) -> tuple[SearchReply, tuple[Any, ...]]:
        """The reply and the engine calls the implementation made for it."""
        require_mode(self.info, "search", request.mode)
        self._need_oracle().require_mode(request.mode)  # an engine without BM25 serves no hybrid mode
        with (
            judged_numbers(self._verdict, "search", request),
            self._filter_errors("search", request, self._search_checked),
        ):
            reply, calls, found = self._search_checked(request)
        if model.failing(found):
            found = self._attribute(request, found, lambda r: not model.failing(self._search_checked(r)[2]))
        self._verdict("search", found, request)
        return reply, calls

    def _search_checked(
        self, request: SearchRequest
    ) -> tuple[SearchReply, tuple[Any, ...], list[model.Violation]]:
        reply, calls = self._ask_through_engine("search", request)
        self._note_extras("search", reply)
        self._seen("search", request, reply)
        oracle = self._need_oracle()
        truth = search_truth(oracle, request)
        found = model.check_search(request, reply, truth)
        if request.mode == "hybrid" and model.failing(found):
            found = self._other_fusions(request, reply, found)
        if request.mode == "dense":
            found += model.check_dense_only(
                calls,
                "the engine calls of a dense-mode search",
                hybrid_collections=self._hybrid_collections(),
                repeated=self._dense_asked_before([request], calls),
                known_empty=not reply.hits and not truth.ranking,
            )
        return reply, tuple(calls), found

    def _other_fusions(
        self, request: SearchRequest, reply: SearchReply, found: list[model.Violation]
    ) -> list[model.Violation]:
        """A hybrid answer that is RRF with other parameters than the request's conforms, with a note."""
        for fusion, truth in hybrid_alternatives(self._need_oracle(), request):
            again = model.check_search(request, reply, truth)
            if not model.failing(again):
                note = model.violation(
                    "hybrid-parameters",
                    f"hybrid hits for RRF k={request.rrf_k}, sub-search limit {request.k}",
                    f"RRF k={request.rrf_k} over sub-searches of limit {request.k} (the request's)",
                    f"the order of {fusion.describe()}",
                )
                return [note, *again]
        return found

    def lookup(self, request: LookupRequest) -> tuple[LookupReply, tuple[Any, ...]]:
        """The reply and the engine calls the implementation made for it."""
        require_mode(self.info, "lookup", request.mode)
        self._need_oracle().require_mode(request.mode)
        with (
            judged_numbers(self._verdict, "lookup", request),
            self._filter_errors("lookup", request, self._lookup_checked),
        ):
            reply, calls, found = self._lookup_checked(request)
        if model.failing(found):
            # Evidence built on a broken search or post-process breaks those first: say that.
            found = self._component_faults(request) or self._attribute(
                request, found, lambda r: not model.failing(self._lookup_checked(r)[2])
            )
        self._verdict("lookup", found, request)
        return reply, calls

    def _lookup_checked(
        self, request: LookupRequest
    ) -> tuple[LookupReply, tuple[Any, ...], list[model.Violation]]:
        reply, calls = self._ask_through_engine("lookup", request)
        self._note_extras("lookup", reply)
        self._seen("lookup", request, reply)
        oracle = self._need_oracle()
        truth = lookup_truth(oracle, request)
        low = (
            own_low_quality(self.implementation, self.info, request, truth)
            if request.category is not None
            else None
        )
        found = model.check_lookup(request, reply, truth, low=low)
        if request.mode == "hybrid" and model.failing(found):
            found = self._other_lookup_fusions(request, reply, found, low)
        if request.mode == "dense":
            searches = [request.search(request.category)]
            if request.category is not None and reply.path != "filtered":
                searches.append(request.search(None))
            found += model.check_dense_only(
                calls,
                "the engine calls of a dense-mode lookup",
                hybrid_collections=self._hybrid_collections(),
                repeated=self._dense_asked_before(searches, calls),
            )
        return reply, tuple(calls), found

    def dense_asked_before(self, request: SearchRequest) -> bool:
        """Whether this dense search was asked of Milvus earlier in the run (for the steps' own checks)."""
        return request.model_dump_json() in self._memory.get("dense_searched", ())

    def _dense_asked_before(self, searches: Sequence[SearchRequest], calls: Sequence[Any]) -> bool:
        """Whether each of ``searches`` reached Milvus as a dense ANN search earlier in this run; a question
        whose calls hold a dense search makes its searches known for the questions after it."""
        known: set[str] = self._memory.setdefault("dense_searched", set())
        keys = [s.model_dump_json() for s in searches]
        before = all(key in known for key in keys)
        if any(c.method == "Search" for c in calls):
            known.update(keys)
        return before

    def _other_lookup_fusions(
        self, request: LookupRequest, reply: LookupReply, found: list[model.Violation], low: set[bool] | None
    ) -> list[model.Violation]:
        oracle = self._need_oracle()
        for fusion in fusions(request.rrf_k, request.retrieve_k, oracle.size):
            again = model.check_lookup(request, reply, lookup_truth(oracle, request, fusion), low=low)
            if not model.failing(again):
                note = model.violation(
                    "hybrid-parameters",
                    "the lookup's hybrid searches",
                    f"RRF k={request.rrf_k} over sub-searches of limit {request.retrieve_k} (the request's)",
                    f"the evidence of {fusion.describe()}",
                )
                return [note, *again]
        return found

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
            reply = ask(self.implementation, "post_process", ask_request)
            faults = model.failing(self._check_post_process(ask_request, reply))
            if faults:
                faults = self._attribute(ask_request, faults, self._post_process_conforms)
                return _under("the post-process under this lookup", faults)
        return []

    def _search_faults(self, request: LookupRequest) -> list[model.Violation]:
        """What the implementation's own search breaks for the searches this lookup makes."""
        for category in dict.fromkeys((request.category, None)):
            search = request.search(category)
            _, _, found = self._search_checked(search)
            faults = model.failing(found)
            if faults:
                faults = self._attribute(
                    search, faults, lambda r: not model.failing(self._search_checked(r)[2])
                )
                return _under("the search under this lookup", faults)
        return []

    def _hybrid_collections(self) -> frozenset[str] | None:
        """The collections the implementation's hybrid mode searches, learnt once per run by asking it one
        hybrid question through the recording proxy (None when it has no hybrid mode, or it failed)."""
        if "hybrid_collections" not in self._memory:
            self._memory["hybrid_collections"] = self._ask_hybrid_collections()
        collections: frozenset[str] | None = self._memory["hybrid_collections"]
        return collections

    def _ask_hybrid_collections(self) -> frozenset[str] | None:
        oracle = self._need_oracle()
        if self._recorder is None or "bm25" in oracle.lacks or not oracle.corpus.queries:
            return None
        question = next(iter(oracle.corpus.queries.values()))
        search = SearchRequest(
            query_text=question.text, query_vector=question.vector, mode="hybrid", k=question.k
        )
        try:
            with self._recording() as calls:
                if self.info.supports("search", "hybrid"):
                    ask(self.implementation, "search", search)
                elif self.info.supports("lookup", "hybrid"):
                    lookup = LookupRequest(
                        query_text=question.text, query_vector=question.vector, mode="hybrid"
                    )
                    ask(self.implementation, "lookup", lookup)
                else:
                    return None
        except ConformanceError:
            return None
        found = frozenset(c.collection for c in calls if c.method in model.DATA_READS and c.collection)
        return found or None

    # -- attribution ---------------------------------------------------------------------------------

    def _attribute(
        self, question: Any, found: list[model.Violation], conforms: Callable[[Any], bool]
    ) -> list[model.Violation]:
        """The findings, counted under the input whose removal makes the question conform (if any)."""
        for variation, varied in variations(question):
            if variation is CATEGORY:
                varied = self._whole_corpus(varied)
            try:
                ok = conforms(varied)
            except ConformanceError:
                continue  # the varied question errored: it explains nothing
            if ok:
                return reattribute(found, variation)  # the first input whose removal explains it
        return found

    @contextlib.contextmanager
    def _filter_errors(
        self, operation: str, request: SearchRequest | LookupRequest, ask_varied: Callable[[Any], Any]
    ) -> Iterator[None]:
        """An implementation that raises on a filtered question it answers without the category breaks the
        category filter (R5, readings 18): the failure is the filter's, not the step's requirement."""
        try:
            yield
        except AdapterCallError as error:
            if request.category is None:
                raise
            try:
                ask_varied(self._whole_corpus(CATEGORY.vary(request)))
            except ConformanceError:
                raise error from None  # it fails without the category too: the error explains itself
            found = model.violation(
                "category-filter",
                f"the {operation} in category {request.category!r}",
                "the search's hits within that category",
                f"an error: {error}",
            )
            self._verdict(operation, [replace(found, varied=CATEGORY.says())], request)  # raises

    # -- helpers -------------------------------------------------------------------------------------

    def _normalizer(self) -> model.Normalizer | None:
        """The implementation's own normalizer, asked without judging (post-process blames the block)."""
        if not self.info.supports("quality"):
            return None

        def normalizer(request: QualityRequest) -> float | None:
            try:
                answer: float = ask(self.implementation, "quality_score", request)
            except AdapterCallError:
                if request.original_rank <= request.batch_size:
                    raise
                return None  # a rank past the batch: the spec's "r within a batch of size n" is not met
            return answer

        return normalizer

    def _whole_corpus(self, varied: Any) -> Any:
        """The question without its category, for every chunk (:func:`every_chunk`, issue 51 item 4)."""
        return varied if self._oracle is None else every_chunk(varied, self._need_oracle().size)

    def _need_oracle(self) -> MilvusOracle:
        if self._oracle is None:
            raise RuntimeError("kit bug: a Milvus-backed question without the oracle")
        return self._oracle()

    def _ask_through_engine(self, operation: str, request: Any) -> tuple[Any, list[Any]]:
        return ask_through_engine(self.implementation, operation, request, self._recording, self._note)

    def _note(self, text: str) -> None:
        if text not in self.notes:
            self.notes.append(text)

    def _recording(self) -> Recording:
        return Recording(self._recorder() if self._recorder is not None else None)

    def _seen(self, operation: str, request: Any, reply: Any) -> None:
        if self._observe is not None:
            self._observe(operation, request, reply)

    def _verdict(self, operation: str, found: Sequence[model.Violation], asked: Any = None) -> None:
        self._wire_notes()
        for v in model.noted(found):
            if v.note() not in self.notes:
                self.notes.append(v.note())
        failing = model.failing(found)
        if failing:
            # Name the request (and, over stdio, the seq the program saw): which of a run's calls it was.
            seq_of = getattr(self.implementation, "seq_of", None)
            seq = seq_of(asked) if callable(seq_of) and asked is not None else None
            where = f"the reply to {describe_call(operation, (asked,), seq)}" if asked is not None else None
            raise model.SpecViolationError(where or f"{operation} reply", failing)

    def _wire_notes(self) -> None:
        """The notes the transport gathered (a stdio reply's fields beside ``result``), as this
        scenario's: the adapter hands each over once (``take_notes``; in-process adapters have none)."""
        take = getattr(self.implementation, "take_notes", None)
        for text in take() if callable(take) else ():
            self._note(text)

    def _note_extras(self, operation: str, reply: BaseModel) -> None:
        self._wire_notes()
        extra = sorted(set(_extra_fields(reply)))
        if extra:
            note = f"{operation} reply carried fields the protocol does not define: {', '.join(extra)}"
            if note not in self.notes:
                self.notes.append(note)


def _under(where: str, found: Sequence[model.Violation]) -> list[model.Violation]:
    return [model.Violation(v.rule, f"{where}: {v.item}", v.expected, v.actual, v.varied) for v in found]


def _extra_fields(value: Any, path: str = "") -> Iterator[str]:
    """The dotted paths of the fields the protocol does not know, in ``value`` and everything it holds."""
    if isinstance(value, BaseModel):
        for name in value.model_extra or {}:
            yield f"{path}{name}"
        for name in type(value).model_fields:
            field = getattr(value, name)
            if isinstance(field, _NESTED):  # not into the numbers and texts, a reply's bulk (vectors)
                yield from _extra_fields(field, f"{path}{name}.")
    elif isinstance(value, tuple | list):
        for item in value:
            if isinstance(item, _NESTED):
                yield from _extra_fields(item, path.rstrip(".") + "[].")


_NESTED = (BaseModel, tuple, list)

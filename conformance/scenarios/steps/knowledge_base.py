"""Property scenarios on a knowledge base like a real team's: search and lookup over generated requests.

The knowledge base is generated per run from the run's seed (:mod:`conformance.corpus._knowledge_base`)
and lives in the corpus the implementation prepared; each property draws a few requests (any query shape,
category, k, RRF k, settings, L0 hints) and asks them through the judge, which checks every reply whole
against the kit's own oracle: the step only says which requests. A crash on a request is ERRORED, with the
falsifying example.
"""

from __future__ import annotations

from typing import Any

from hypothesis import strategies as st
from pytest_bdd import given, then

from ...boundary._decline import NotApplicable
from ...boundary._protocol import LookupRequest, SearchRequest
from ...corpus._explicit_requests import explicit_lookups, explicit_searches
from ...corpus._knowledge_base import KnowledgeBase
from ...judging._judge import Judge
from .. import _strategies as gen
from ._property_run import PropertyRun

__all__: list[str] = []

Generated = dict[str, st.SearchStrategy[Any]]


@given("a knowledge base like a real team's, loaded into the implementation")
def _(rqs_knowledge_base: KnowledgeBase) -> None:
    """The session fixture loads it with the scenario corpus; this step makes the precondition readable."""


@given("any search of it: any query shape, category, k and RRF k, in either mode", target_fixture="generated")
def _(rqs_knowledge_base: KnowledgeBase) -> Generated:
    return {"request": gen.kb_search_requests(rqs_knowledge_base)}


@given("any hybrid search of it", target_fixture="generated")
def _(rqs_knowledge_base: KnowledgeBase) -> Generated:
    return {"request": gen.kb_search_requests(rqs_knowledge_base, ("hybrid",))}


@given("any dense-mode search of it", target_fixture="generated")
def _(rqs_knowledge_base: KnowledgeBase) -> Generated:
    return {"request": gen.kb_search_requests(rqs_knowledge_base, ("dense",))}


@given(
    "any lookup of it: any query shape, category, settings and L0 hints, in either mode",
    target_fixture="generated",
)
def _(rqs_knowledge_base: KnowledgeBase) -> Generated:
    return {"request": gen.kb_lookup_requests(rqs_knowledge_base)}


def _search(
    judge: Judge,
    run: PropertyRun,
    generated: Generated,
    kb: KnowledgeBase,
    *,
    modes: tuple[str, ...],
    explicit: int | None = None,
) -> None:
    """Every request the knowledge base asks first (or the first ``explicit`` of them), then random ones."""

    def body(request: SearchRequest) -> None:
        judge.search(request)  # the judge checks the whole reply and the engine calls

    declared = tuple(m for m in modes if judge.info.supports("search", m))
    if not declared:
        raise NotApplicable(
            f"implementation {judge.info.name!r} declares search for none of {', '.join(modes)}"
        )
    first = [SearchRequest(**e) for e in explicit_searches(kb) if e["mode"] in declared][:explicit]
    drawn = {"request": gen.kb_search_requests(kb, declared)} if declared != modes else generated
    run.on_knowledge_base().check(drawn, body, examples=[{"request": r} for r in first])


@then(
    "each hit SHALL carry the mode's label, dense hits SHALL be the nearest chunks with their L2 distance, "
    "and hybrid hits SHALL follow RRF via originalRank"
)
def _(
    rqs_judge: Judge, rqs_property_run: PropertyRun, generated: Generated, rqs_knowledge_base: KnowledgeBase
) -> None:
    _search(rqs_judge, rqs_property_run, generated, rqs_knowledge_base, modes=("dense", "hybrid"))


@then(
    "no hybrid hit's score SHALL be its dense L2 distance or a max-L2 placeholder, and no hit SHALL be "
    "labelled bm25_only_no_dense"
)
def _(
    rqs_judge: Judge, rqs_property_run: PropertyRun, generated: Generated, rqs_knowledge_base: KnowledgeBase
) -> None:
    # The score-labels property asks every explicit request already, both modes: a few suffice here.
    _search(rqs_judge, rqs_property_run, generated, rqs_knowledge_base, modes=("hybrid",), explicit=4)


@then("Milvus SHALL be asked for dense ANN searches only")
def _(
    rqs_judge: Judge, rqs_property_run: PropertyRun, generated: Generated, rqs_knowledge_base: KnowledgeBase
) -> None:
    _search(rqs_judge, rqs_property_run, generated, rqs_knowledge_base, modes=("dense",), explicit=4)


@then(
    "the evidence SHALL be a post-processing of the search the mode names, and the category retry SHALL "
    "run exactly when the filtered result is low quality"
)
def _(
    rqs_judge: Judge, rqs_property_run: PropertyRun, generated: Generated, rqs_knowledge_base: KnowledgeBase
) -> None:
    def body(request: LookupRequest) -> None:
        rqs_judge.lookup(request)

    modes = tuple(m for m in ("dense", "hybrid") if rqs_judge.info.supports("lookup", m))
    if not modes:
        raise NotApplicable(f"implementation {rqs_judge.info.name!r} declares lookup for neither mode")
    first = [
        {"request": LookupRequest(**e)} for e in explicit_lookups(rqs_knowledge_base) if e["mode"] in modes
    ]
    drawn = generated if len(modes) == 2 else {"request": gen.kb_lookup_requests(rqs_knowledge_base, modes)}
    rqs_property_run.on_knowledge_base().check(drawn, body, examples=first)

"""The category's counterfactual is asked for every chunk (issue 51 item 4): the unfiltered question holds
every hit the filtered one held, so a fault in one hit is not filed under the filter."""

from __future__ import annotations

from conformance.boundary._protocol import LookupRequest, PostProcessRequest, SearchRequest
from conformance.judging._attribution import CATEGORY, every_chunk

_SEARCH = SearchRequest(query_text="q", query_vector=(1.0, 0.0), mode="hybrid", k=5, category="  spaced out ")
_LOOKUP = LookupRequest(query_text="q", query_vector=(1.0, 0.0), category="  spaced out ", retrieve_k=7)


def test_a_search_without_its_category_is_asked_for_every_chunk() -> None:
    varied = every_chunk(CATEGORY.vary(_SEARCH), 180)
    assert (varied.category, varied.k) == (None, 180)
    assert varied.model_copy(update={"k": 5}) == CATEGORY.vary(_SEARCH)  # nothing else changes


def test_a_lookup_without_its_category_retrieves_every_chunk() -> None:
    varied = every_chunk(CATEGORY.vary(_LOOKUP), 180)
    assert (varied.category, varied.retrieve_k) == (None, 180)


def test_a_k_past_the_corpus_stays_and_other_questions_pass_through() -> None:
    wide = _SEARCH.model_copy(update={"k": 500})
    assert every_chunk(wide, 180) == wide
    post = PostProcessRequest(candidates=())
    assert every_chunk(post, 180) is post

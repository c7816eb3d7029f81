"""Steps about evidence: lookup_knowledge end to end, its category retry, and rank-ordered post-process.

Quality expectations use the spec's dense formula and the default configuration sent with every
request; which readings of "top qualityScore" and of the hybrid rank mapping an implementation chose is
left open (spec-readings 3, 4, 7): the corpus makes every reading agree where the scenarios decide.
"""

from __future__ import annotations

from dataclasses import dataclass

from pytest_bdd import given, parsers, then, when

from .._calls import ask
from .._corpus import ChunkKey, ScenarioCorpus, ScenarioQuery, key_of
from .._errors import ConformanceError
from .._oracle import MilvusOracle
from .._protocol import (
    Implementation,
    ImplementationInfo,
    LookupReply,
    LookupRequest,
    PostProcessConfig,
    PostProcessReply,
)
from .._skip import require_mode
from .search import Mode, parse_mode, show_key

__all__ = ["CONFIG", "Evidence", "dense_quality"]

CONFIG = PostProcessConfig()  # sent explicitly with every request, so both sides use these thresholds


def dense_quality(distance: float | None, max_l2: float) -> float:
    """The spec's dense formula: ``max(0, 1 - min(d, maxL2) / maxL2)``, null -> 0."""
    if distance is None:
        return 0.0
    return max(0.0, 1.0 - min(max(distance, 0.0), max_l2) / max_l2)


@dataclass(frozen=True)
class Evidence:
    """Evidence the implementation produced: by lookup (with its question) or by post-process alone."""

    reply: PostProcessReply
    question: ScenarioQuery | None = None
    mode: Mode | None = None
    category: str | None = None

    @property
    def keys(self) -> list[ChunkKey]:
        return [key_of(b) for b in self.reply.blocks]

    @property
    def path(self) -> str | None:
        return self.reply.path if isinstance(self.reply, LookupReply) else None


# -- premises about the kit's corpus (a failure here is the kit's bug, not the implementation's) -----


def _best_quality(oracle: MilvusOracle, query: ScenarioQuery, category: str | None) -> float:
    ranked = oracle.l2_order(query.vector, category)
    if not ranked:
        raise ConformanceError(f"kit bug: no chunk of category {category!r} for {query.name!r}")
    return dense_quality(ranked[0].score, CONFIG.max_l2_distance)


@given(
    parsers.parse(
        'the best "{category}" match for "{question}" has a dense qualityScore below the reference threshold'
    )
)
def _(rqs_oracle: MilvusOracle, rqs_scenario_corpus: ScenarioCorpus, category: str, question: str) -> None:
    if _best_quality(rqs_oracle, rqs_scenario_corpus.query(question), category) >= CONFIG.reference_threshold:
        raise ConformanceError(f"kit bug: the best {category!r} match for {question!r} is not low quality")


@given(
    parsers.parse(
        'the best match for "{question}" without a category has a dense qualityScore below the threshold'
    )
)
def _(rqs_oracle: MilvusOracle, rqs_scenario_corpus: ScenarioCorpus, question: str) -> None:
    if _best_quality(rqs_oracle, rqs_scenario_corpus.query(question), None) >= CONFIG.reference_threshold:
        raise ConformanceError(f"kit bug: the best match for {question!r} is not low quality")


@given(
    parsers.parse(
        'the best match for "{question}" without a category has a dense qualityScore meeting the threshold'
    )
)
def _(rqs_oracle: MilvusOracle, rqs_scenario_corpus: ScenarioCorpus, question: str) -> None:
    if _best_quality(rqs_oracle, rqs_scenario_corpus.query(question), None) < CONFIG.reference_threshold:
        raise ConformanceError(f"kit bug: the best match for {question!r} is low quality")


@given(
    parsers.parse(
        'the best "{category}" match for "{question}" is first in dense and hybrid order'
        " and meets the threshold"
    )
)
def _(rqs_oracle: MilvusOracle, rqs_scenario_corpus: ScenarioCorpus, category: str, question: str) -> None:
    query = rqs_scenario_corpus.query(question)
    dense_first = rqs_oracle.l2_order(query.vector, category)[0]
    fused_first = rqs_oracle.rrf(query.vector, query.text, query.k, category=category)[0]
    good = dense_quality(dense_first.score, CONFIG.max_l2_distance) >= CONFIG.reference_threshold
    if dense_first.key != fused_first.key or not good:
        raise ConformanceError(f"kit bug: the best {category!r} match for {question!r} is not clearly good")


@given(parsers.parse('no chunk of the corpus has category "{category}"'))
def _(rqs_scenario_corpus: ScenarioCorpus, category: str) -> None:
    if category in rqs_scenario_corpus.categories:
        raise ConformanceError(f"kit bug: the corpus has chunks of category {category!r}")


# -- asking the implementation ---------------------------------------------------------------------


@when(
    parsers.parse(
        'lookup_knowledge runs in "{mode}" mode for "{question}" filtered by category "{category}"'
    ),
    target_fixture="evidence",
)
def _(
    rqs_implementation: Implementation,
    rqs_info: ImplementationInfo,
    rqs_corpus: ScenarioCorpus,
    rqs_oracle: MilvusOracle,
    mode: str,
    question: str,
    category: str,
) -> Evidence:
    return _lookup(rqs_implementation, rqs_info, rqs_oracle, rqs_corpus.query(question), mode, category)


@when(
    parsers.parse('lookup_knowledge runs in "{mode}" mode for "{question}" without a category'),
    target_fixture="evidence",
)
def _(
    rqs_implementation: Implementation,
    rqs_info: ImplementationInfo,
    rqs_corpus: ScenarioCorpus,
    rqs_oracle: MilvusOracle,
    mode: str,
    question: str,
) -> Evidence:
    return _lookup(rqs_implementation, rqs_info, rqs_oracle, rqs_corpus.query(question), mode, None)


def _lookup(
    implementation: Implementation,
    info: ImplementationInfo,
    oracle: MilvusOracle,
    query: ScenarioQuery,
    mode: str,
    category: str | None,
) -> Evidence:
    checked = parse_mode(mode)
    require_mode(info, "lookup", checked)
    oracle.require_mode(checked)  # an engine without BM25 cannot serve hybrid mode to anyone
    request = LookupRequest(
        query_text=query.text,
        query_vector=query.vector,
        mode=checked,
        category=category,
        retrieve_k=query.k,
        config=CONFIG,
    )
    reply = ask(implementation, "lookup", request, expect=LookupReply)
    return Evidence(reply=reply, question=query, mode=checked, category=category)


# -- the retry -------------------------------------------------------------------------------------


@then("the lookup retried without the category")
def _(evidence: Evidence) -> None:
    assert evidence.path == "unfiltered_retry", (
        f"the filtered result for category {evidence.category!r} is low quality, so the category-filter "
        f"retry must run; the implementation reports path {evidence.path!r}"
    )


@then("the lookup used the filtered result without retrying")
def _(evidence: Evidence) -> None:
    assert evidence.path == "filtered", (
        f"the filtered result for category {evidence.category!r} meets the reference threshold, so no "
        f"retry may run; the implementation reports path {evidence.path!r}"
    )


@then("the lookup used the unfiltered result without retrying")
def _(evidence: Evidence) -> None:
    assert evidence.path == "unfiltered", (
        "no category filter was used, so there is nothing to retry without; the implementation reports "
        f"path {evidence.path!r}"
    )


@then(parsers.parse('the evidence includes the best match for "{question}" without a category'))
def _(evidence: Evidence, rqs_oracle: MilvusOracle, rqs_corpus: ScenarioCorpus, question: str) -> None:
    best = rqs_oracle.l2_order(rqs_corpus.query(question).vector)[0].key
    assert best in evidence.keys, (
        f"the unfiltered retry finds {show_key(best)} first (merged or replacing, both conform); the "
        f"implementation's evidence is {[show_key(k) for k in evidence.keys]}"
    )


@then("every evidence key is unique")
def _(evidence: Evidence) -> None:
    keys = [b.evidence_key for b in evidence.reply.blocks]
    assert len(keys) == len(set(keys)), f"evidence keys must stay unique; the implementation returned {keys}"


@then(parsers.parse('every evidence block belongs to category "{category}"'))
def _(evidence: Evidence, rqs_corpus: ScenarioCorpus, category: str) -> None:
    outside = [show_key(k) for k in evidence.keys if rqs_corpus.category_of(k) != category]
    assert evidence.keys, f"the filtered lookup for category {category!r} returned no evidence"
    assert not outside, (
        f"the filtered lookup for category {category!r} was used without retry, so its evidence must come "
        f"from that category; the implementation returned {[show_key(k) for k in evidence.keys]}"
    )

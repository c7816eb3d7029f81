"""Relevance and low-quality gates (R5): decided by qualityScore alone, never by L0 hints.

"Top qualityScore" has two readings (first accepted block, or highest quality); the fixtures make them
coincide, and the steps check that they do before judging a gate. Level names below the highly-relevant
threshold are implementation-defined, so only PRECISE / HIGHLY_RELEVANT at or above it are checked.
"""

from __future__ import annotations

from collections.abc import Sequence

from pytest_bdd import given, parsers, then, when

from ...boundary._protocol import Hints, PostProcessConfig, PostProcessReply, WireCandidate
from ...judging._judge import Judge
from ...judging._spec_model import QUALITY_TOLERANCE, expect
from ._tables import describe_blocks, hint_matches, hints_from_table, yes_no
from .postprocess import run_post_process

_HINT_RUNS = ("no hints", "hints no candidate contains", "hints every candidate contains")


def _top(reply: PostProcessReply) -> float:
    """The top qualityScore, once both readings of "top" are seen to agree."""
    assert reply.blocks, (
        "the scenario needs at least one accepted evidence block; the implementation gave none"
    )
    first, highest = reply.blocks[0].quality_score, max(b.quality_score for b in reply.blocks)
    assert abs(first - highest) <= QUALITY_TOLERANCE, (
        "in this fixture the best-ranked block also has the highest qualityScore (dense distances grow "
        f"with rank, hybrid rank 1 is 1.0); the implementation accepted: {describe_blocks(reply)}"
    )
    return first


# -- Given ---------------------------------------------------------------------------------------


@given(
    parsers.parse("the configured reference threshold is {threshold:g} and maxL2Distance is {max_l2:g}"),
    target_fixture="postprocess_config",
)
def _(threshold: float, max_l2: float, postprocess_config: PostProcessConfig) -> PostProcessConfig:
    return postprocess_config.model_copy(update={"reference_threshold": threshold, "max_l2_distance": max_l2})


@given(parsers.parse("maxL2Distance is {max_l2:g}"), target_fixture="postprocess_config")
def _(max_l2: float, postprocess_config: PostProcessConfig) -> PostProcessConfig:
    return postprocess_config.model_copy(update={"max_l2_distance": max_l2})


@given(
    parsers.parse("the configured highly-relevant threshold is {threshold:g}"),
    target_fixture="postprocess_config",
)
def _(threshold: float, postprocess_config: PostProcessConfig) -> PostProcessConfig:
    return postprocess_config.model_copy(update={"highly_relevant_threshold": threshold})


@given("L0 hints that no candidate contains:", target_fixture="l0_hints")
def _(candidates: Sequence[WireCandidate], datatable: list[list[str]]) -> Hints:
    hints = hints_from_table(datatable)
    matching = [c.doc_id for c in candidates if hint_matches(hints, c)]
    assert not matching, f"kit fixture error: candidates {matching} contain a hint"
    return hints


@given("L0 hints that every candidate contains:", target_fixture="matching_hints")
def _(candidates: Sequence[WireCandidate], datatable: list[list[str]]) -> Hints:
    hints = hints_from_table(datatable)
    kinds = sum(1 for kind in (hints.domain, hints.entities, hints.keywords) if kind)
    weak = [c.doc_id for c in candidates if hint_matches(hints, c) < kinds]
    assert not weak, f"kit fixture error: candidates {weak} do not contain every kind of hint"
    return hints


# -- When ----------------------------------------------------------------------------------------


@when("post-process finishes with at least one evidence block", target_fixture="postprocess_reply")
def _(
    rqs_judge: Judge,
    candidates: Sequence[WireCandidate],
    l0_hints: Hints,
    postprocess_config: PostProcessConfig,
) -> PostProcessReply:
    reply = run_post_process(rqs_judge, candidates, l0_hints, postprocess_config)
    assert reply.blocks, (
        f"post-process SHALL keep the best-ranked of {len(candidates)} distinct candidates (only dedup and "
        "caps remove any); the implementation accepted no evidence block"
    )
    return reply


@when(
    "post-process runs with no hints, with the hints no candidate contains, "
    "and with the hints every candidate contains",
    target_fixture="replies_by_hints",
)
def _(
    rqs_judge: Judge,
    candidates: Sequence[WireCandidate],
    l0_hints: Hints,
    matching_hints: Hints,
    postprocess_config: PostProcessConfig,
) -> dict[str, PostProcessReply]:
    hint_sets = dict(zip(_HINT_RUNS, (Hints(), l0_hints, matching_hints), strict=True))
    return {
        run: run_post_process(rqs_judge, candidates, hints, postprocess_config)
        for run, hints in hint_sets.items()
    }


# -- Then ----------------------------------------------------------------------------------------


@then(parsers.parse("the top qualityScore is {expected:g}"))
def _(expected: float, postprocess_reply: PostProcessReply) -> None:
    top = _top(postprocess_reply)
    assert abs(top - expected) <= QUALITY_TOLERANCE, (
        f"the top qualityScore SHALL come from the single normalizer: {expected:g}; the implementation "
        f"gave {top!r}: {describe_blocks(postprocess_reply)}"
    )


@then(
    parsers.parse(
        "low-quality detection SHALL compare the top qualityScore to the configured reference threshold: "
        "low quality is {low}"
    ),
    converters={"low": yes_no},
)
def _(low: bool, postprocess_reply: PostProcessReply, postprocess_config: PostProcessConfig) -> None:
    top, threshold = _top(postprocess_reply), postprocess_config.reference_threshold
    relation = "below" if low else "at or above"
    assert postprocess_reply.is_low_quality is low, (
        f"the top qualityScore {top:g} is {relation} the reference threshold {threshold:g}, so the result "
        f"SHALL {'' if low else 'NOT '}be low quality; the implementation answered isLowQuality="
        f"{postprocess_reply.is_low_quality}"
    )


@then(
    "it SHALL NOT require L0 hint contains-match to treat the result as usable when quality meets threshold"
)
def _(postprocess_reply: PostProcessReply, postprocess_config: PostProcessConfig) -> None:
    top, threshold = _top(postprocess_reply), postprocess_config.reference_threshold
    if top >= threshold:
        assert not postprocess_reply.is_low_quality, (
            f"the top qualityScore {top:g} meets the reference threshold {threshold:g}; no L0 hint matched, "
            "and the spec says none is needed, yet the implementation flagged the result as low quality"
        )


@then("the top qualityScore is at or above the highly-relevant threshold every time")
def _(replies_by_hints: dict[str, PostProcessReply], postprocess_config: PostProcessConfig) -> None:
    threshold = postprocess_config.highly_relevant_threshold
    for run, reply in replies_by_hints.items():
        top = _top(reply)
        assert top >= threshold - QUALITY_TOLERANCE, (
            f"the top qualityScore of this batch SHALL be at least the highly-relevant threshold "
            f"{threshold:g} (single normalizer); with {run} the implementation gave {top!r}: "
            f"{describe_blocks(reply)}"
        )


@then(
    "the system MAY assign PRECISE or HIGHLY_RELEVANT without requiring domain/entity/keyword contains "
    "support: the relevance level is the one it gets with supporting hints"
)
def _(replies_by_hints: dict[str, PostProcessReply]) -> None:
    """readings 12: the MAY permits PRECISE or HIGHLY_RELEVANT, it does not oblige either name; what
    the scenario forbids is REQUIRING hint support, i.e. a level that changes when the hints stop matching.
    """
    supported = replies_by_hints[_HINT_RUNS[2]].relevance_level
    for run in _HINT_RUNS[:2]:
        level = replies_by_hints[run].relevance_level
        assert level == supported, (
            "at or above the highly-relevant threshold the level SHALL NOT require domain/entity/keyword "
            f"contains support; with {_HINT_RUNS[2]} the implementation answered {supported!r}, with {run} "
            f"{level!r}"
        )


@then("the relevance level, the low-quality flag and topSimilarity SHALL be the same all three times")
def _(replies_by_hints: dict[str, PostProcessReply]) -> None:
    gates = {run: _gates(reply) for run, reply in replies_by_hints.items()}
    baseline = gates[_HINT_RUNS[0]]
    for run, seen in gates.items():
        same = seen[:2] == baseline[:2] and _close(seen[2], baseline[2])
        assert same, (
            "the gates SHALL use qualityScore only, so L0 hints cannot change them; "
            f"(relevance level, low quality, topSimilarity) was {baseline} with {_HINT_RUNS[0]} "
            f"but {seen} with {run}"
        )


@then("the accepted blocks and their qualityScores SHALL be the same all three times")
def _(replies_by_hints: dict[str, PostProcessReply]) -> None:
    baseline = replies_by_hints[_HINT_RUNS[0]]
    for run, reply in replies_by_hints.items():
        keys = [(b.doc_id, b.chunk_index) for b in reply.blocks]
        same_keys = keys == [(b.doc_id, b.chunk_index) for b in baseline.blocks]
        same_quality = same_keys and all(
            _close(b.quality_score, a.quality_score)
            for a, b in zip(baseline.blocks, reply.blocks, strict=True)
        )
        expect(
            same_quality,
            "no-boost",
            f"the same candidates with {_HINT_RUNS[0]} and with {run}",
            f"the same blocks: {describe_blocks(baseline)}",
            describe_blocks(reply),
        )


@then("topSimilarity SHALL equal the top qualityScore")
def _(postprocess_reply: PostProcessReply) -> None:
    top, reported = _top(postprocess_reply), postprocess_reply.top_quality_score
    assert _close(reported, top), (
        f"topSimilarity (topQualityScore) SHALL be the top qualityScore {top!r}; the implementation "
        f"reported {reported!r}"
    )


@then("no evidence block is accepted")
def _(postprocess_reply: PostProcessReply) -> None:
    assert not postprocess_reply.blocks, f"no candidates, yet blocks: {describe_blocks(postprocess_reply)}"


@then("the result SHALL be low quality")
def _(postprocess_reply: PostProcessReply) -> None:
    assert postprocess_reply.is_low_quality, (
        "with no accepted evidence there is no top qualityScore to meet the reference threshold, so the "
        "result SHALL be low quality; the implementation answered isLowQuality=False"
    )


def _gates(reply: PostProcessReply) -> tuple[str, bool, float | None]:
    return reply.relevance_level, reply.is_low_quality, reply.top_quality_score


def _close(a: float | None, b: float | None) -> bool:
    if a is None or b is None:
        return a is b
    return abs(a - b) <= QUALITY_TOLERANCE

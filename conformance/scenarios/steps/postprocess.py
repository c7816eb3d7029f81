"""Post-process steps: candidates in, evidence blocks out, in retrieval rank order (R4).

State flows through fixtures: ``candidates``, ``l0_hints`` and ``postprocess_config`` are what the
Given steps set up, ``postprocess_reply`` is the implementation's answer. Oracles here are the kit's
own: they read the candidate tables, never another implementation.
"""

from __future__ import annotations

from collections.abc import Sequence

import pytest
from pytest_bdd import given, parsers, then, when

from ...boundary._protocol import (
    Hints,
    PostProcessConfig,
    PostProcessReply,
    PostProcessRequest,
    WireCandidate,
)
from ...judging._judge import Judge
from ._tables import candidates_from_table, describe_blocks, hint_matches, hints_from_table, ranks_from_text

# -- defaults: a scenario overrides these through Given steps ------------------------------------


@pytest.fixture
def postprocess_config() -> PostProcessConfig:
    """The post-process configuration; the wire defaults unless a Given step changes it."""
    return PostProcessConfig()


@pytest.fixture
def l0_hints() -> Hints:
    """No L0 hints unless a Given step supplies some."""
    return Hints()


# -- Given ---------------------------------------------------------------------------------------


@given(parsers.parse("these {label:w} candidates:"), target_fixture="candidates")
def _(label: str, datatable: list[list[str]]) -> tuple[WireCandidate, ...]:
    return candidates_from_table(datatable, label=label)


@given("no candidates", target_fixture="candidates")
def _() -> tuple[WireCandidate, ...]:
    return ()


@given(
    parsers.parse(
        "candidate {a:w} has originalRank={rank_a:d} and candidate {b:w} has originalRank={rank_b:d} "
        "among these {label:w} candidates:"
    ),
    target_fixture="candidates",
)
def _(
    a: str, rank_a: int, b: str, rank_b: int, label: str, datatable: list[list[str]]
) -> tuple[WireCandidate, ...]:
    candidates = candidates_from_table(datatable, label=label)
    # The step's sentence is the spec's precondition; check the table says the same.
    ranks = {c.doc_id: c.original_rank for c in candidates}
    assert (ranks.get(a), ranks.get(b)) == (rank_a, rank_b), (
        f"kit fixture error: the table gives {a} rank {ranks.get(a)} and {b} rank {ranks.get(b)}"
    )
    return candidates


@given(
    parsers.parse('these {label:w} candidates, where more than {cap:d} chunks share docId "{doc}":'),
    target_fixture="candidates",
)
def _(label: str, cap: int, doc: str, datatable: list[list[str]]) -> tuple[WireCandidate, ...]:
    candidates = candidates_from_table(datatable, label=label)
    sharing = sum(1 for c in candidates if c.doc_id == doc)
    assert sharing > cap, (
        f"kit fixture error: only {sharing} chunks of {doc!r}, the scenario needs more than {cap}"
    )
    return candidates


@given(
    parsers.parse("rag.max-chunks-per-document is {cap:d} and rag.return-n is {return_n:d}"),
    target_fixture="postprocess_config",
)
def _(cap: int, return_n: int, postprocess_config: PostProcessConfig) -> PostProcessConfig:
    return postprocess_config.model_copy(update={"max_chunks_per_document": cap, "return_n": return_n})


@given(
    parsers.parse("{b:w} matches more L0 keywords via string contains than {a:w}, with these L0 hints:"),
    target_fixture="l0_hints",
)
def _(a: str, b: str, candidates: Sequence[WireCandidate], datatable: list[list[str]]) -> Hints:
    hints = hints_from_table(datatable)
    by_doc = {c.doc_id: hint_matches(hints, c) for c in candidates}
    assert by_doc[b] > by_doc[a], f"kit fixture error: {b} matches {by_doc[b]} hints, {a} matches {by_doc[a]}"
    return hints


@given("L0 hints that the worse-ranked candidates match best:", target_fixture="l0_hints")
def _(candidates: Sequence[WireCandidate], datatable: list[list[str]]) -> Hints:
    hints = hints_from_table(datatable)
    ordered = sorted(candidates, key=lambda c: c.original_rank)
    best, worst = hint_matches(hints, ordered[0]), hint_matches(hints, ordered[-1])
    assert worst > best, f"kit fixture error: the worst rank matches {worst} hints, the best {best}"
    return hints


# -- When ----------------------------------------------------------------------------------------


def run_post_process(
    judge: Judge,
    candidates: Sequence[WireCandidate],
    hints: Hints,
    config: PostProcessConfig,
) -> PostProcessReply:
    """Ask the implementation to post-process one batch (shared with the gate steps)."""
    request = PostProcessRequest(candidates=tuple(candidates), hints=hints, config=config)
    return judge.post_process(request)


@when("post-process runs", target_fixture="postprocess_reply")
def _(
    rqs_judge: Judge,
    candidates: Sequence[WireCandidate],
    l0_hints: Hints,
    postprocess_config: PostProcessConfig,
) -> PostProcessReply:
    return run_post_process(rqs_judge, candidates, l0_hints, postprocess_config)


# -- Then ----------------------------------------------------------------------------------------


@then(
    parsers.parse(
        "{a:w} SHALL appear before {b:w} among accepted blocks, "
        "subject only to dedup/caps removing one of them"
    )
)
def _(
    a: str,
    b: str,
    postprocess_reply: PostProcessReply,
    candidates: Sequence[WireCandidate],
    postprocess_config: PostProcessConfig,
) -> None:
    order = [block.doc_id for block in postprocess_reply.blocks]
    if _nothing_to_remove(candidates, postprocess_config):
        missing = [name for name in (a, b) if name not in order]
        assert not missing, (
            f"the spec lets only dedup or caps remove {a} or {b}; this batch triggers neither, "
            f"yet the implementation accepted: {describe_blocks(postprocess_reply)}"
        )
    if a in order and b in order:
        assert order.index(a) < order.index(b), (
            f"{a} SHALL come before {b} (lower originalRank first) even though {b} matches more L0 "
            f"keywords; the implementation accepted: {describe_blocks(postprocess_reply)}"
        )


@then(parsers.parse("the accepted blocks SHALL be, in order: {doc_ids}"))
def _(doc_ids: str, postprocess_reply: PostProcessReply) -> None:
    expected = [d.strip() for d in doc_ids.split(",")]
    actual = [block.doc_id for block in postprocess_reply.blocks]
    assert actual == expected, (
        f"post-process SHALL order by originalRank ascending, not by L0 hint boosts: expected "
        f"{', '.join(expected)}; the implementation accepted: {describe_blocks(postprocess_reply)}"
    )


@then("the accepted blocks SHALL keep originalRank order")
def _(postprocess_reply: PostProcessReply) -> None:
    ranks = [block.original_rank for block in postprocess_reply.blocks]
    assert ranks == sorted(ranks), (
        "post-process SHALL order candidates by originalRank ascending (ties in any order); "
        f"the implementation accepted: {describe_blocks(postprocess_reply)}"
    )


@then("every candidate is accepted")
def _(
    postprocess_reply: PostProcessReply,
    candidates: Sequence[WireCandidate],
    postprocess_config: PostProcessConfig,
) -> None:
    assert _nothing_to_remove(candidates, postprocess_config), "kit fixture error: dedup or caps apply"
    expected = sorted((c.doc_id, c.chunk_index) for c in candidates)
    actual = sorted((b.doc_id, b.chunk_index) for b in postprocess_reply.blocks)
    assert actual == expected, (
        f"this batch has {len(candidates)} distinct chunks and stays under both caps, so dedup and caps "
        f"remove nothing; the implementation accepted: {describe_blocks(postprocess_reply)}"
    )


@then("no chunk SHALL be accepted twice")
def _(postprocess_reply: PostProcessReply) -> None:
    keys = [(b.doc_id, b.chunk_index) for b in postprocess_reply.blocks]
    assert len(keys) == len(set(keys)), (
        "dedup SHALL leave each chunk once; the implementation accepted: "
        f"{describe_blocks(postprocess_reply)}"
    )
    evidence_keys = [b.evidence_key for b in postprocess_reply.blocks]
    assert len(evidence_keys) == len(set(evidence_keys)), f"evidence keys repeat: {evidence_keys}"


@then(
    parsers.parse(
        'only the best-ranked (lowest originalRank) chunks of "{doc}" up to the cap SHALL remain: '
        "originalRank {ranks}"
    )
)
def _(
    doc: str, ranks: str, postprocess_reply: PostProcessReply, postprocess_config: PostProcessConfig
) -> None:
    expected = ranks_from_text(ranks)
    kept = tuple(sorted(b.original_rank for b in postprocess_reply.blocks if b.doc_id == doc))
    assert kept == expected, (
        f"with rag.max-chunks-per-document={postprocess_config.max_chunks_per_document}, only the "
        f"best-ranked chunks of {doc!r} SHALL remain (originalRank {', '.join(map(str, expected))}); "
        f"the implementation kept originalRank {', '.join(map(str, kept)) or 'none'}: "
        f"{describe_blocks(postprocess_reply)}"
    )


@then("rag.return-n SHALL still bound total blocks")
def _(postprocess_reply: PostProcessReply, postprocess_config: PostProcessConfig) -> None:
    total = len(postprocess_reply.blocks)
    assert total <= postprocess_config.return_n, (
        f"rag.return-n={postprocess_config.return_n} SHALL bound total blocks; the implementation "
        f"accepted {total}: {describe_blocks(postprocess_reply)}"
    )


def _nothing_to_remove(candidates: Sequence[WireCandidate], config: PostProcessConfig) -> bool:
    """True when no dedup, per-document cap or return-n can remove a candidate of this batch."""
    keys = [(c.doc_id, c.chunk_index) for c in candidates]
    per_doc = max((sum(1 for c in candidates if c.doc_id == d) for d, _ in keys), default=0)
    return (
        len(set(keys)) == len(keys)
        and per_doc <= config.max_chunks_per_document
        and len(keys) <= config.return_n
    )

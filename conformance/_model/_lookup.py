"""lookup_knowledge (R5 with R3, R4, R7): the reply against the kit's own search results and the model.

The kit knows each attempt's candidates from its oracle (:class:`Attempt`): the hits a conforming search
returns, in order, with their true dense distances attached to hybrid hits. The implementation may attach
denseDistance or not (R7 "MAY"), so hybrid qualities may follow the L2 formula on the distance or any rank
mapping, and the filtered result's "low quality" may differ between those readings: where the readings
disagree either path conforms, where they agree the path is fixed. The retry result may replace the
filtered one or be merged with it (readings 7).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

from .._protocol import LookupReply, LookupRequest, PostProcessConfig, PostProcessReply, WireCandidate
from ._numbers import DISTANCE_TOLERANCE, QUALITY_TOLERANCE, canonical, close, dense_quality, show
from ._postprocess import check_post_process, gate_violations, kept_ranks
from ._rules import Violation, violation

__all__ = ["Attempt", "LookupTruth", "check_lookup", "low_quality_readings"]


@dataclass(frozen=True)
class Attempt:
    """One search a lookup makes (filtered by ``category``, or not), as a conforming search answers it."""

    category: str | None
    candidates: tuple[WireCandidate, ...]


@dataclass(frozen=True)
class LookupTruth:
    unfiltered: Attempt
    filtered: Attempt | None = None


def low_quality_readings(attempt: Attempt, config: PostProcessConfig) -> set[bool]:
    """Every "low quality" decision a conforming implementation may reach on this attempt's result."""
    kept = _kept(attempt.candidates, config)
    if not kept:
        return {True}
    tolerance = QUALITY_TOLERANCE + DISTANCE_TOLERANCE / config.max_l2_distance
    kind = canonical(kept[0].score_label)
    readings: list[list[float]] = []
    if kind == "dense":
        readings.append([dense_quality(c.score, config.max_l2_distance) for c in kept])
    else:
        readings.append([1.0])  # any rank mapping: rank 1 is kept first and maps to 1.0
        if all(c.dense_distance is not None for c in kept):
            readings.append([dense_quality(c.dense_distance, config.max_l2_distance) for c in kept])
    decisions: set[bool] = set()
    for qualities in readings:
        for top in (qualities[0], max(qualities)):
            decisions.add(top < config.reference_threshold)
            if abs(top - config.reference_threshold) <= tolerance:
                decisions.update((True, False))
    return decisions


def _kept(candidates: Sequence[WireCandidate], config: PostProcessConfig) -> list[WireCandidate]:
    ranks = Counter(kept_ranks(candidates, config))
    out = []
    for c in sorted(candidates, key=lambda c: c.original_rank):
        if ranks[c.original_rank] > 0:
            ranks[c.original_rank] -= 1
            out.append(c)
    return out


def check_lookup(request: LookupRequest, reply: LookupReply, truth: LookupTruth) -> list[Violation]:
    """Every rule the spec fixes for one lookup reply; an empty list means the spec allows it.

    The evidence is judged first, as the post-processing of the attempt the reply names: a wrong quality
    or a wrong cap also moves the retry decision, and the report should name the cause. Then the path.
    """
    config = request.config
    if request.category is None:
        found = _evidence(truth.unfiltered, reply, config)
        if not found and reply.path != "unfiltered":
            found = [
                violation(
                    "retry-path",
                    "lookup without a category",
                    "path 'unfiltered' (nothing to retry)",
                    repr(reply.path),
                )
            ]
        return found
    assert truth.filtered is not None, "a filtered lookup needs the filtered attempt's truth"
    if reply.path == "filtered":
        found = _evidence(truth.filtered, reply, config)
    else:
        found = _retry_evidence(truth, reply, config)
    if found:
        return found
    allowed = {
        ("unfiltered_retry" if low else "filtered") for low in low_quality_readings(truth.filtered, config)
    }
    if reply.path not in allowed:
        item = f"lookup filtered by category {request.category!r}"
        state = "low quality" if allowed == {"unfiltered_retry"} else "not low quality"
        return [
            violation(
                "retry-path",
                item,
                " or ".join(sorted(map(repr, allowed))) + f" (the filtered result is {state})",
                repr(reply.path),
            )
        ]
    return []


def _retry_evidence(truth: LookupTruth, reply: LookupReply, config: PostProcessConfig) -> list[Violation]:
    """The retry's evidence: the unfiltered result replacing the filtered one, or merged with it."""
    replaced = _evidence(truth.unfiltered, reply, config)
    if not replaced or not _merged(truth, reply, config):
        return []
    best = truth.unfiltered.candidates[0] if truth.unfiltered.candidates else None
    missing_best = best is not None and (best.doc_id, best.chunk_index) not in {
        (b.doc_id, b.chunk_index) for b in reply.blocks
    }
    if missing_best or any(v.rule.id == "lookup-retrieval" for v in replaced):
        got = ", ".join(f"{b.doc_id}#{b.chunk_index}@{b.original_rank}" for b in reply.blocks) or "no blocks"
        return [
            violation(
                "retry-evidence",
                f"lookup path {reply.path!r}",
                "the unfiltered search's result, alone or merged with the filtered one (with its best chunk)",
                got,
            )
        ]
    return replaced


def _evidence(attempt: Attempt, reply: PostProcessReply, config: PostProcessConfig) -> list[Violation]:
    """The reply as a post-processing of the attempt's hits; wrong hits are the search's fault first."""
    known = {(c.doc_id, c.chunk_index, c.original_rank) for c in attempt.candidates}
    strangers = [b for b in reply.blocks if (b.doc_id, b.chunk_index, b.original_rank) not in known]
    if strangers:
        # Blocks that are no hit of a conforming search (or carry another rank): the retrieval differs,
        # and every quality or gate check on top of it would only repeat that.
        kind = canonical(attempt.candidates[0].score_label) if attempt.candidates else None
        want = ", ".join(f"{c.doc_id}#{c.chunk_index}@{c.original_rank}" for c in attempt.candidates)
        got = ", ".join(f"{b.doc_id}#{b.chunk_index}@{b.original_rank}" for b in reply.blocks)
        where = f" in category {attempt.category!r}" if attempt.category else ""
        return [
            violation(
                "lookup-retrieval",
                f"{kind or 'the'} evidence{where} (docId#chunkIndex@originalRank)",
                f"blocks among the hits {want or '(none)'}",
                got,
            )
        ]
    return check_post_process(attempt.candidates, config, reply, distance_tolerance=DISTANCE_TOLERANCE)


def _merged(truth: LookupTruth, reply: LookupReply, config: PostProcessConfig) -> list[Violation]:
    """The retry merged with the filtered result: the reading the spec leaves loosest.

    Blocks come from either attempt (with that attempt's rank), each chunk once, within the caps;
    qualities are those of their candidates; the unfiltered retry's best chunk is in; gates follow
    the blocks' qualities.
    """
    assert truth.filtered is not None
    tolerance = QUALITY_TOLERANCE + DISTANCE_TOLERANCE / config.max_l2_distance
    sources = {(c.doc_id, c.chunk_index, c.original_rank): c for c in truth.filtered.candidates}
    sources.update({(c.doc_id, c.chunk_index, c.original_rank): c for c in truth.unfiltered.candidates})
    found: list[Violation] = []
    keys = [(b.doc_id, b.chunk_index) for b in reply.blocks]
    if len(keys) != len(set(keys)):
        found.append(violation("dedup", "merged retry evidence", "each chunk once", str(keys)))
    if len(keys) > config.return_n or any(
        n > config.max_chunks_per_document for n in Counter(d for d, _ in keys).values()
    ):
        found.append(
            violation("retry-evidence", "merged retry evidence", "within the caps and return-n", str(keys))
        )
    qualities = []
    for block in reply.blocks:
        source = sources.get((block.doc_id, block.chunk_index, block.original_rank))
        if source is None:
            found.append(
                violation(
                    "retry-evidence",
                    f"block {block.evidence_key}",
                    "a hit of the filtered or the unfiltered search, with its originalRank there",
                    f"originalRank {block.original_rank}",
                )
            )
            continue
        distance = source.score if canonical(source.score_label) == "dense" else source.dense_distance
        by_formula = dense_quality(distance, config.max_l2_distance)
        if canonical(source.score_label) == "dense" and not close(block.quality_score, by_formula, tolerance):
            found.append(
                violation(
                    "dense-formula",
                    f"block {block.evidence_key}",
                    repr(by_formula),
                    show(block.quality_score),
                )
            )
        qualities.append(block.quality_score)
    best = truth.unfiltered.candidates[0] if truth.unfiltered.candidates else None
    if best is not None and (best.doc_id, best.chunk_index) not in keys:
        found.append(
            violation(
                "retry-evidence",
                "merged retry evidence",
                f"the unfiltered search's best chunk {best.doc_id}#{best.chunk_index}",
                str(keys),
            )
        )
    return found + gate_violations(reply, qualities, config, tolerance)

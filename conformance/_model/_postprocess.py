"""Post-process (R3, R4, R5, R7): is this reply one the spec allows for these candidates and this config?

A checker, not a second implementation. It pins what the spec fixes and accepts every freedom:

- fixed: originalRank order; dedup by chunk; the per-document cap and return-n, walked in rank order, so
  the best-ranked candidates remain; each block is one of the candidates with its canonical label; the
  dense formula; qualities in [0, 1]; a reported ``dropped`` list complete and true; low quality exactly
  when the top qualityScore is below the reference threshold (or nothing was accepted); topQualityScore
  equal to the top qualityScore.
- free: the order among equal ranks (and so which tied chunk a cap keeps); any rank mapping with rank 1
  -> 1.0 that never increases with rank (the batch size read before or after dedup); with denseDistance on
  every hybrid candidate, the L2 formula on it or a rank mapping (R7 "MAY"); with denseDistance on some
  only, any quality in [0, 1] (readings 5); "top" as the first block or the highest quality
  (readings 3); level names (checked across replies, not here); extra reply fields.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from itertools import pairwise

from .._protocol import Block, PostProcessConfig, PostProcessReply, QualityRequest, WireCandidate
from ._numbers import QUALITY_TOLERANCE, canonical, close, dense_quality, show
from ._rules import Violation, violation

__all__ = ["DROP_REASONS", "Normalizer", "check_post_process", "kept_ranks", "top_readings"]

DROP_REASONS = ("duplicate", "per_document_cap", "return_n")
Normalizer = Callable[[QualityRequest], float]
"""The implementation's own normalizer, when it declares ``quality`` (the one-normalizer check)."""

ChunkKey = tuple[str, int]


def _key(item: WireCandidate | Block) -> ChunkKey:
    return (item.doc_id, item.chunk_index)


def _name(item: WireCandidate | Block) -> str:
    return f"{item.doc_id}#{item.chunk_index} (originalRank {item.original_rank})"


def kept_ranks(candidates: Sequence[WireCandidate], config: PostProcessConfig) -> list[int]:
    """Dedup, the per-document cap and return-n walked in originalRank order: the ranks that remain.

    Which of several tied candidates remains may differ between conforming tie orders; their ranks
    may not.
    """
    seen: set[ChunkKey] = set()
    per_doc: Counter[str] = Counter()
    kept: list[int] = []
    for c in sorted(candidates, key=lambda c: c.original_rank):
        key = _key(c)
        removed = key in seen or per_doc[c.doc_id] >= config.max_chunks_per_document
        seen.add(key)
        if removed or len(kept) >= config.return_n:
            continue
        per_doc[c.doc_id] += 1
        kept.append(c.original_rank)
    return kept


def top_readings(qualities: Sequence[float]) -> tuple[float, ...]:
    """The allowed readings of "top qualityScore": the first block's, and the highest (readings 3)."""
    if not qualities:
        return ()
    return tuple(dict.fromkeys((qualities[0], max(qualities))))


@dataclass
class _Batch:
    """What the model knows about one request: candidates by identity, and the batch's label kind."""

    candidates: Sequence[WireCandidate]
    config: PostProcessConfig

    @property
    def kind(self) -> str | None:
        kinds = {canonical(c.score_label) for c in self.candidates}
        return kinds.pop() if len(kinds) == 1 and None not in kinds else None


def check_post_process(
    candidates: Sequence[WireCandidate],
    config: PostProcessConfig,
    reply: PostProcessReply,
    *,
    normalizer: Normalizer | None = None,
    distance_tolerance: float = 0.0,
) -> list[Violation]:
    """Every rule the spec fixes for one post-process reply; an empty list means the spec allows it.

    ``distance_tolerance`` widens quality comparisons for candidates whose distances the kit knows
    only to float32 (a lookup, where the implementation's engine computed them).
    """
    batch = _Batch(candidates, config)
    tolerance = QUALITY_TOLERANCE + distance_tolerance / config.max_l2_distance
    matched, found = _match(batch, reply.blocks)
    found += _structure(batch, reply.blocks)
    found += _labels(matched)
    expected = _qualities(batch, matched, tolerance, found)
    if normalizer is not None and not any(v.rule.id.endswith(("formula", "range")) for v in found):
        found += _one_normalizer(batch, matched, normalizer, tolerance)
    found += gate_violations(reply, expected, config, tolerance)
    if reply.dropped:
        found += _dropped(batch, reply)
    return found


def gate_violations(
    reply: PostProcessReply, qualities: Sequence[float], config: PostProcessConfig, tolerance: float
) -> list[Violation]:
    """Low quality and topQualityScore against the block qualities the spec gives (both "top" readings)."""
    found: list[Violation] = []
    tops = top_readings(qualities)
    ref = config.reference_threshold
    allowed_low = {True} if not tops else {t < ref for t in tops}
    if any(abs(t - ref) <= tolerance for t in tops):
        allowed_low = {True, False}  # float32 arithmetic may land on either side of the threshold
    if reply.is_low_quality not in allowed_low:
        shown = " or ".join(f"{t!r}" for t in tops) or "none (no evidence)"
        found.append(
            violation(
                "low-quality",
                f"isLowQuality with top qualityScore {shown} and reference threshold {ref:g}",
                str(not reply.is_low_quality).lower(),
                str(reply.is_low_quality).lower(),
            )
        )
    reported = reply.top_quality_score
    if tops and not any(close(reported, t, tolerance) for t in tops):
        found.append(
            violation(
                "top-quality",
                "topQualityScore",
                " or ".join(f"{t!r}" for t in tops) + " (the first block's or the highest qualityScore)",
                show(reported),
            )
        )
    if not tops and reported not in (None, 0.0):
        found.append(
            violation("top-quality", "topQualityScore with no evidence", "null (or 0)", show(reported))
        )
    return found


# -- identity, order and structure -------------------------------------------------------------------


def _match(
    batch: _Batch, blocks: Sequence[Block]
) -> tuple[list[tuple[Block, WireCandidate]], list[Violation]]:
    """Pair each block with the candidate it is (docId, chunkIndex, originalRank), each candidate once."""
    pool: dict[tuple[str, int, int], list[WireCandidate]] = {}
    for c in batch.candidates:
        pool.setdefault((c.doc_id, c.chunk_index, c.original_rank), []).append(c)
    matched, found = [], []
    for block in blocks:
        key = f"{block.doc_id}#{block.chunk_index}"
        if block.evidence_key != key:
            found.append(
                violation(
                    "evidence-identity",
                    f"block {_name(block)}",
                    f"evidenceKey {key!r}",
                    repr(block.evidence_key),
                )
            )
        same = pool.get((block.doc_id, block.chunk_index, block.original_rank))
        if not same:
            found.append(
                violation(
                    "evidence-identity",
                    f"block {_name(block)}",
                    "one of the candidates (same docId, chunkIndex and originalRank)",
                    "no such candidate",
                )
            )
            continue
        matched.append((block, same.pop(_pick(block, same, batch.config))))
    return matched, found


def _pick(block: Block, same: Sequence[WireCandidate], config: PostProcessConfig) -> int:
    """Which of several candidates with the block's docId, chunkIndex and originalRank it is: the one
    whose distance gives the block's quality, if any (copies of a chunk may carry other scores)."""
    for index, c in enumerate(same):
        distance = c.score if canonical(c.score_label) == "dense" else c.dense_distance
        if distance is not None and close(
            block.quality_score, dense_quality(distance, config.max_l2_distance)
        ):
            return index
    return 0


def _structure(batch: _Batch, blocks: Sequence[Block]) -> list[Violation]:
    found: list[Violation] = []
    ranks = [b.original_rank for b in blocks]
    shown = ", ".join(f"{b.doc_id}#{b.chunk_index}@{b.original_rank}" for b in blocks) or "no blocks"
    if ranks != sorted(ranks):
        found.append(violation("rank-order", "accepted blocks", "ascending originalRank", shown))
    repeated = [k for k, n in Counter(_key(b) for b in blocks).items() if n > 1]
    if repeated:
        found.append(
            violation(
                "dedup",
                "accepted blocks",
                "each chunk once",
                f"{', '.join(f'{d}#{i}' for d, i in repeated)} more than once ({shown})",
            )
        )
    cap = batch.config.max_chunks_per_document
    over = {d: n for d, n in Counter(b.doc_id for b in blocks).items() if n > cap}
    if over:
        found.append(
            violation("per-document-cap", "accepted blocks", f"at most {cap} per docId", f"{over} ({shown})")
        )
    if len(blocks) > batch.config.return_n:
        found.append(
            violation(
                "return-n", "accepted blocks", f"at most {batch.config.return_n}", f"{len(blocks)} ({shown})"
            )
        )
    want = kept_ranks(batch.candidates, batch.config)
    if sorted(ranks) != want:
        found.append(
            violation(
                "best-ranks-kept",
                f"accepted blocks (cap {cap}, return-n {batch.config.return_n})",
                f"the candidates of originalRank {want}",
                f"originalRank {sorted(ranks)} ({shown})",
            )
        )
    return found


def _labels(matched: Sequence[tuple[Block, WireCandidate]]) -> list[Violation]:
    found: list[Violation] = []
    for block, candidate in matched:
        want = canonical(candidate.score_label)
        if want is None:
            continue
        rule = "dense-distance-label" if candidate.dense_distance is not None else "block-label"
        if canonical(block.score_label) != want:
            found.append(
                violation(
                    rule,
                    f"block {_name(block)}",
                    f"a label canonicalizing to {want!r}",
                    repr(block.score_label),
                )
            )
        elif block.score_label == "bm25_only_no_dense" and candidate.score_label != "bm25_only_no_dense":
            found.append(
                violation(
                    "no-bm25-only-label",
                    f"block {_name(block)}",
                    f"{candidate.score_label!r} (its candidate's)",
                    "'bm25_only_no_dense'",
                )
            )
    return found


# -- qualities ----------------------------------------------------------------------------------------


def _qualities(
    batch: _Batch,
    matched: Sequence[tuple[Block, WireCandidate]],
    tolerance: float,
    found: list[Violation],
) -> list[float]:
    """Check every block's qualityScore; return the qualities the gates are judged on (in block order).

    The gates are judged on the blocks' own qualities: where those are right (within tolerance) they are
    the spec's, and where they are wrong the quality rule has already failed the reply; a gate that
    follows a wrong quality is the quality's fault, not a second violation of the gates.
    """
    expected: list[float] = []
    for block, candidate in matched:
        q = block.quality_score
        if not 0.0 <= q <= 1.0:
            found.append(violation("quality-range", f"block {_name(block)}", "within [0, 1]", show(q)))
        if batch.kind == "dense":
            want = dense_quality(candidate.score, batch.config.max_l2_distance)
            if not close(q, want, tolerance):
                found.append(
                    violation(
                        "dense-formula",
                        f"block {_name(block)} (score {show(candidate.score)}, maxL2Distance "
                        f"{batch.config.max_l2_distance:g})",
                        repr(want),
                        show(q),
                    )
                )
        expected.append(q)
    if batch.kind == "hybrid":
        found += _hybrid(batch, matched, tolerance)
    return expected


def _hybrid(
    batch: _Batch, matched: Sequence[tuple[Block, WireCandidate]], tolerance: float
) -> list[Violation]:
    """Hybrid qualities: the L2 formula on denseDistance where a block has one and uses it (R7 MAY), and
    one rank mapping for every other block. A batch whose hits carry denseDistance only in part is not
    specified beyond that (readings 5): the blocks that do not follow their distance must still follow
    one rank mapping, as they do when no hit has a distance."""
    max_l2 = batch.config.max_l2_distance
    by_rank = [
        (b.original_rank, b.quality_score)
        for b, c in matched
        if c.dense_distance is None
        or not close(b.quality_score, dense_quality(c.dense_distance, max_l2), tolerance)
    ]
    problem = _rank_mapping_problem(by_rank, tolerance)
    if problem is None:
        return []
    rule, item, expected, actual = problem
    if any(c.dense_distance is not None for _, c in matched):
        return [
            violation(
                "dense-distance-quality",
                "hybrid blocks with denseDistance",
                f"the L2 formula on each denseDistance (maxL2Distance {max_l2:g}), or a rank mapping",
                f"neither: {item} {actual}",
            )
        ]
    return [violation(rule, item, expected, actual)]


def _rank_mapping_problem(
    pairs: Sequence[tuple[int, float]], tolerance: float
) -> tuple[str, str, str, str] | None:
    """Why (rank, quality) pairs cannot come from one rank mapping, or None when they can."""
    for rank, quality in pairs:
        if rank == 1 and not close(quality, 1.0, tolerance):
            return ("rank-one", "the block of originalRank 1", "qualityScore 1.0", show(quality))
    by_rank = sorted(pairs)
    for (r1, q1), (r2, q2) in pairwise(by_rank):
        if r1 == r2 and not close(q1, q2, tolerance):
            return (
                "rank-monotone",
                f"two blocks of originalRank {r1}",
                "the same qualityScore",
                f"{q1!r} and {q2!r}",
            )
        if q2 > q1 + tolerance * max(1.0, abs(q1)):
            return (
                "rank-monotone",
                f"originalRank {r1} then {r2}",
                "a qualityScore that does not increase",
                f"{q1!r} then {q2!r}",
            )
    return None


def _one_normalizer(
    batch: _Batch, matched: Sequence[tuple[Block, WireCandidate]], normalizer: Normalizer, tolerance: float
) -> list[Violation]:
    """Each block's quality is what the implementation's normalizer answers for its candidate.

    The batch size may be read before or after dedup (readings 4): either answer conforms.
    """
    sizes = tuple(dict.fromkeys((len(batch.candidates), len({_key(c) for c in batch.candidates}))))
    for block, c in matched:
        answers = []
        for n in sizes:
            request = QualityRequest(
                score_label=c.score_label,
                score=c.score,
                original_rank=c.original_rank,
                batch_size=max(n, 1),
                max_l2_distance=batch.config.max_l2_distance,
                dense_distance=c.dense_distance,
            )
            answers.append(normalizer(request))
        if not any(close(block.quality_score, a, tolerance) for a in answers):
            return [
                violation(
                    "one-normalizer",
                    f"block {_name(block)}",
                    " or ".join(f"{a!r}" for a in dict.fromkeys(answers))
                    + " (the normalizer's answer for this candidate, batch size "
                    + " or ".join(map(str, sizes))
                    + ")",
                    show(block.quality_score),
                )
            ]
    return []


# -- dropped ------------------------------------------------------------------------------------------


def _dropped(batch: _Batch, reply: PostProcessReply) -> list[Violation]:
    """When a dropped list is given, it holds exactly the removed candidates, each with a true reason."""
    found: list[Violation] = []
    remaining = Counter((f"{c.doc_id}#{c.chunk_index}", c.original_rank) for c in batch.candidates)
    remaining.subtract((b.evidence_key, b.original_rank) for b in reply.blocks)
    by_id = {(f"{c.doc_id}#{c.chunk_index}", c.original_rank): c for c in batch.candidates}
    for d in reply.dropped:
        item = f"dropped {d.evidence_key} (originalRank {d.original_rank})"
        ident = (d.evidence_key, d.original_rank)
        if remaining[ident] <= 0:
            found.append(
                violation("dropped", item, "a removed candidate, listed once", "not one (or listed twice)")
            )
            continue
        remaining[ident] -= 1
        if d.reason not in DROP_REASONS:
            found.append(
                violation("dropped", item, f"a reason among {', '.join(DROP_REASONS)}", repr(d.reason))
            )
        elif not _reason_holds(d.reason, by_id[ident], batch, reply):
            found.append(violation("dropped", item, "a reason that applies to it", repr(d.reason)))
    missing = sorted(f"{k} (originalRank {r})" for (k, r), n in remaining.items() if n > 0)
    if missing:
        found.append(
            violation("dropped", "dropped list", "every removed candidate", f"missing {', '.join(missing)}")
        )
    return found


def _reason_holds(reason: str, c: WireCandidate, batch: _Batch, reply: PostProcessReply) -> bool:
    others = [o for o in batch.candidates if o is not c and o.original_rank <= c.original_rank]
    if reason == "duplicate":
        return any(_key(o) == _key(c) for o in others)
    if reason == "per_document_cap":
        same_doc = {_key(o) for o in others if o.doc_id == c.doc_id and _key(o) != _key(c)}
        return len(same_doc) >= batch.config.max_chunks_per_document
    blocks = reply.blocks
    return len(blocks) >= batch.config.return_n and all(b.original_rank <= c.original_rank for b in blocks)

"""Post-process (R3, R4, R5, R7): is this reply one the spec allows for these candidates and this config?

A checker, not a second implementation. It pins what the spec fixes and accepts every freedom:

- fixed: originalRank order; dedup by chunk; the per-document cap and return-n, walked in rank order, so
  the best-ranked candidates remain; each block is one of the candidates with its canonical label (never
  a legacy alias); the dense formula; qualities in [0, 1]; low quality exactly when the top qualityScore
  is below the reference threshold (or nothing was accepted); topQualityScore equal to the top
  qualityScore.
- free: the order among equal ranks (and so which tied chunk a cap keeps); any rank mapping with rank 1
  -> 1.0 that never increases with rank (the batch size read before or after dedup or the caps); with
  denseDistance, an absolute similarity from it or a rank mapping (R7 "MAY"); with denseDistance on some
  hits only, the others still one rank mapping (readings 5); "top" as the first block or the highest
  quality (readings 3); level names (checked across replies, not here); extra reply fields.
- noted, never failed (the protocol's shapes, not the spec's words): the evidenceKey spelling, a block's
  originalRank other than its candidate's, the dropped list, topQualityScore without evidence.
"""

from __future__ import annotations

import itertools
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

from ...boundary._protocol import Block, PostProcessConfig, PostProcessReply, WireCandidate
from ._labels import canonical
from ._numbers import QUALITY_TOLERANCE, close, dense_quality, show
from ._qualities import Normalizer, batch_sizes, block_qualities, kind_of, one_normalizer
from ._rules import Violation, failing, violation

__all__ = [
    "DROP_REASONS",
    "Normalizer",
    "block_labels",
    "check_post_process",
    "gate_violations",
    "kept_ranks",
    "top_readings",
]

DROP_REASONS = ("duplicate", "per_document_cap", "return_n")
"""The protocol's suggested drop reasons; an implementation may use its own codes (readings 16)."""

ChunkKey = tuple[str, int]
Matched = list[tuple[Block, WireCandidate]]


def _key(item: WireCandidate | Block) -> ChunkKey:
    return (item.doc_id, item.chunk_index)


def _name(item: WireCandidate | Block) -> str:
    return f"{item.doc_id}#{item.chunk_index} (originalRank {item.original_rank})"


def kept_ranks(candidates: Sequence[WireCandidate], config: PostProcessConfig) -> list[int]:
    """Dedup, the per-document cap and return-n walked in originalRank order: the ranks that remain.

    Which of several tied candidates remains may differ between conforming tie orders; their ranks
    may not.
    """
    return sorted(c.original_rank for c in kept_candidates(candidates, config, limit=config.return_n))


def kept_candidates(
    candidates: Sequence[WireCandidate], config: PostProcessConfig, *, limit: int | None = None
) -> list[WireCandidate]:
    """The candidates that remain after dedup, the cap and (with ``limit``) return-n, in rank order."""
    seen: set[ChunkKey] = set()
    per_doc: Counter[str] = Counter()
    kept: list[WireCandidate] = []
    for c in sorted(candidates, key=lambda c: c.original_rank):
        key = _key(c)
        removed = key in seen or per_doc[c.doc_id] >= config.max_chunks_per_document
        seen.add(key)
        if removed or (limit is not None and len(kept) >= limit):
            continue
        per_doc[c.doc_id] += 1
        kept.append(c)
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
        return kind_of(self.candidates)


def check_post_process(
    candidates: Sequence[WireCandidate],
    config: PostProcessConfig,
    reply: PostProcessReply,
    *,
    normalizer: Normalizer | None = None,
    distance_tolerance: float = 0.0,
    attached: bool = True,
) -> list[Violation]:
    """Every rule the spec fixes for one post-process reply; no failing finding means the spec allows it.

    The list holds notes too (rules whose ``fails`` is False); :func:`~._rules.failing` keeps the rest.
    ``distance_tolerance`` widens quality comparisons for candidates whose distances the kit knows
    only to float32 (a lookup, where the implementation's engine computed them). ``attached`` False: the
    candidates' denseDistance is the kit's knowledge, not something the implementation was handed (a
    lookup), so a wrong label is R1's, not R7's.
    """
    batch = _Batch(candidates, config)
    tolerance = QUALITY_TOLERANCE + distance_tolerance / config.max_l2_distance
    matched, found = _match(batch, reply.blocks)
    found += _structure(batch, matched)
    found += block_labels(matched, attached=attached)
    found += block_qualities(batch.kind, matched, config, tolerance)
    if normalizer is not None and not any(v.rule.id.endswith(("formula", "range")) for v in failing(found)):
        kept = len(kept_candidates(candidates, config))
        sizes = batch_sizes(candidates, kept, len(reply.blocks))
        found += one_normalizer(matched, sizes, config, normalizer, tolerance, candidates)
    found += gate_violations(reply, [b.quality_score for b, _ in matched], config, tolerance)
    found += _dropped(batch, reply)
    return found


def gate_violations(
    reply: PostProcessReply, qualities: Sequence[float], config: PostProcessConfig, tolerance: float
) -> list[Violation]:
    """Low quality and topQualityScore against the block qualities (both readings of "top").

    The gates are judged on the blocks' own qualities: where those are right they are the spec's, and
    where they are wrong a quality rule has already failed the reply; a gate that follows a wrong
    quality is the quality's fault, not a second violation of the gates.
    """
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
            violation("top-quality-empty", "topQualityScore with no evidence", "null (or 0)", show(reported))
        )
    return found


# -- identity, order and structure -------------------------------------------------------------------


def _match(batch: _Batch, blocks: Sequence[Block]) -> tuple[Matched, list[Violation]]:
    """Pair each block with the candidate it is, each candidate once.

    A block is matched by docId, chunkIndex and originalRank; failing that, by docId and chunkIndex (its
    originalRank is then a note: the protocol's shape, and the order checks use the candidate's rank).
    """
    pool: dict[ChunkKey, list[WireCandidate]] = {}
    for c in sorted(batch.candidates, key=lambda c: c.original_rank):
        pool.setdefault(_key(c), []).append(c)
    matched: Matched = []
    found: list[Violation] = []
    for block in blocks:
        key = f"{block.doc_id}#{block.chunk_index}"
        if block.evidence_key != key:
            found.append(
                violation(
                    "evidence-key", f"block {_name(block)}", f"evidenceKey {key!r}", repr(block.evidence_key)
                )
            )
        same = pool.get(_key(block))
        if not same:
            found.append(
                violation(
                    "evidence-identity",
                    f"block {_name(block)}",
                    "one of the candidates (same docId and chunkIndex)",
                    "no such candidate",
                )
            )
            continue
        index = _pick(block, same, batch.config)
        candidate = same.pop(index)
        if candidate.original_rank != block.original_rank:
            found.append(
                violation(
                    "evidence-key",
                    f"block {_name(block)}",
                    f"originalRank {candidate.original_rank} (its candidate's)",
                    f"originalRank {block.original_rank}",
                )
            )
        matched.append((block, candidate))
    return matched, found


def _pick(block: Block, same: Sequence[WireCandidate], config: PostProcessConfig) -> int:
    """Which candidate with the block's chunk it is: the one of its originalRank (of those, the one whose
    distance gives the block's quality: copies of a chunk may carry other scores), else the best-ranked."""
    ranked = [i for i, c in enumerate(same) if c.original_rank == block.original_rank]
    for index in ranked:
        c = same[index]
        dense = canonical(c.score_label) == "dense"
        distance = c.score if dense else c.dense_distance
        if (dense or distance is not None) and close(
            block.quality_score, dense_quality(distance, config.max_l2_distance)
        ):
            return index  # a dense copy with a null score gives 0: it may be the one kept
    return ranked[0] if ranked else 0


def _structure(batch: _Batch, matched: Matched) -> list[Violation]:
    found: list[Violation] = []
    ranks = [c.original_rank for _, c in matched]
    shown = ", ".join(f"{c.doc_id}#{c.chunk_index}@{c.original_rank}" for _, c in matched) or "no blocks"
    if ranks != sorted(ranks):
        found.append(violation("rank-order", "accepted blocks", "ascending originalRank", shown))
        if _by_distance(matched):
            found.append(
                violation(
                    "dense-distance-order",
                    "accepted blocks, ordered by their denseDistance",
                    "ascending originalRank from the hybrid results",
                    shown,
                )
            )
    repeated = [k for k, n in Counter(_key(c) for _, c in matched).items() if n > 1]
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
    over = {d: n for d, n in Counter(c.doc_id for _, c in matched).items() if n > cap}
    if over:
        found.append(
            violation("per-document-cap", "accepted blocks", f"at most {cap} per docId", f"{over} ({shown})")
        )
    if len(matched) > batch.config.return_n:
        found.append(
            violation(
                "return-n", "accepted blocks", f"at most {batch.config.return_n}", f"{len(matched)} ({shown})"
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


def block_labels(matched: Matched, *, attached: bool = True) -> list[Violation]:
    """Each block carries its candidate's canonical label, exactly (R1, R7 with an attached distance); a
    hybrid candidate's block labelled ``l2_distance`` is the legacy L2 backfill too (R2)."""
    found: list[Violation] = []
    for block, candidate in matched:
        want = canonical(candidate.score_label)
        if want is None:
            continue
        item = f"block {_name(candidate)}"
        rule = "dense-distance-label" if attached and candidate.dense_distance is not None else "block-label"
        if canonical(block.score_label) != want:
            found.append(
                violation(rule, item, f"a label canonicalizing to {want!r}", repr(block.score_label))
            )
            if want == "hybrid" and block.score_label == "l2_distance":
                found.append(
                    violation("l2-relabel", item, "'hybrid'", "'l2_distance', the legacy L2 backfill's")
                )
        elif block.score_label == "bm25_only_no_dense" and candidate.score_label != "bm25_only_no_dense":
            found.append(
                violation("no-bm25-only-label", item, f"{want!r} (its candidate's)", "'bm25_only_no_dense'")
            )
        elif block.score_label != want:
            found.append(
                violation(
                    "emitted-alias",
                    item,
                    f"{want!r}: an evidence block is a new emission, and carries dense or hybrid only",
                    f"{block.score_label!r}, a legacy alias",
                )
            )
    return found


def _by_distance(matched: Matched) -> bool:
    """Whether hybrid blocks come nearest first by denseDistance (a reorder R7 forbids)."""
    distances = [c.dense_distance for _, c in matched]
    if (
        len(distances) < 3  # two blocks out of rank order are nearest first by chance half the time
        or any(d is None for d in distances)
        or kind_of([c for _, c in matched]) != "hybrid"
    ):
        return False
    return all(a <= b for a, b in itertools.pairwise(distances))  # type: ignore[operator]


# -- dropped ------------------------------------------------------------------------------------------


def _dropped(batch: _Batch, reply: PostProcessReply) -> list[Violation]:
    """Notes on a dropped list, when one is given: it holds exactly the removed candidates, and a reason
    among the protocol's codes applies. The spec names neither the list nor its codes (readings 16)."""
    if not reply.dropped:
        return []
    found: list[Violation] = []
    remaining = Counter((f"{c.doc_id}#{c.chunk_index}", c.original_rank) for c in batch.candidates)
    remaining.subtract((f"{b.doc_id}#{b.chunk_index}", b.original_rank) for b in reply.blocks)
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
        if d.reason in DROP_REASONS and not _reason_holds(d.reason, by_id[ident], batch, reply):
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

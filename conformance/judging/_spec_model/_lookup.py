"""lookup_knowledge (R5 with R3, R4, R7): the reply against the kit's own search results and the model.

The kit knows each attempt's candidates from its oracle (:class:`Attempt`): the hits a conforming search
returns, in order, with their true dense distances attached to hybrid hits; chunks whose scores tie may
come in any order (``ties``), so the evidence is judged against every order of a tie group that it does
not itself reveal. The implementation may attach denseDistance or not (R7 "MAY"), so hybrid qualities
may follow an absolute similarity of the distance or any rank mapping, and the filtered result's "low
quality" may differ between those readings: the judge then decides it on the implementation's own terms
(its normalizer and post-process, when declared; see :mod:`conformance.judging._judge`), and otherwise either
path conforms where the readings disagree. The retry result may replace the filtered one or be merged
with it, with its own ranks or renumbered (readings 7).
"""

from __future__ import annotations

import itertools
from collections import Counter
from collections.abc import Iterator, Sequence
from dataclasses import dataclass

from ...boundary._protocol import (
    Block,
    LookupReply,
    LookupRequest,
    PostProcessConfig,
    PostProcessReply,
    WireCandidate,
)
from ._labels import canonical
from ._numbers import DISTANCE_TOLERANCE, QUALITY_TOLERANCE, dense_quality
from ._postprocess import block_labels, check_post_process, gate_violations, kept_candidates
from ._qualities import block_qualities, kind_of
from ._rules import Violation, failing, violation

__all__ = ["Attempt", "LookupTruth", "check_lookup", "low_quality_readings"]

ChunkKey = tuple[str, int]
_MAX_ORDERS = 64  # tie orders tried per attempt; beyond that, the default order only


@dataclass(frozen=True)
class Attempt:
    """One search a lookup makes (filtered by ``category``, or not), as a conforming search answers it.

    ``ties`` are ``(start, end)`` index ranges of ``candidates`` whose scores tie: a conforming search
    may return them in any order, each taking the ranks of the range.
    """

    category: str | None
    candidates: tuple[WireCandidate, ...]
    ties: tuple[tuple[int, int], ...] = ()
    spill: tuple[WireCandidate, ...] = ()  # past the end, tied with the last group: may take its places

    def places(self) -> dict[ChunkKey, int]:
        """Each chunk's place in this search's order, chunks that tie sharing their group's first place
        (the spill's is the last group's): a conforming search returns a group in any order."""
        place = {(c.doc_id, c.chunk_index): i for i, c in enumerate(self.candidates)}
        last = len(self.candidates)
        for start, end in self.ties:
            place.update({(c.doc_id, c.chunk_index): start for c in self.candidates[start:end]})
            if end == len(self.candidates):
                last = start
        place.update({(c.doc_id, c.chunk_index): last for c in self.spill})
        return place

    def orders(self, blocks: Sequence[Block] = ()) -> Iterator[tuple[WireCandidate, ...]]:
        """The candidate lists of every tie order consistent with the blocks' (chunk, rank) pairs."""
        shown = {(b.doc_id, b.chunk_index): b.original_rank for b in blocks}
        end_of = len(self.candidates)
        groups = [(s, e) for s, e in self.ties if e - s > 1 or (e == end_of and self.spill)]
        choices: list[list[tuple[WireCandidate, ...]]] = []
        for start, end in groups:
            members = list(self.candidates[start:end])
            if end == end_of and self.spill:
                members += self.spill  # any of them may take the last places
            orders = _group_orders(members, start, end - start, shown)
            choices.append(list(itertools.islice(orders, 24)))
        if not groups or not all(choices):
            yield self.candidates  # no ties, or blocks no tie order explains: judged as they are
            return
        for picks in itertools.islice(itertools.product(*choices), _MAX_ORDERS):
            out = list(self.candidates)
            for (start, end), pick in zip(groups, picks, strict=True):
                out[start:end] = pick
            yield tuple(out)


def _group_orders(
    group: Sequence[WireCandidate], start: int, places: int, shown: dict[ChunkKey, int]
) -> Iterator[tuple[WireCandidate, ...]]:
    """Orders of one tie group in its ``places`` ranks: chunks a block shows keep the rank it shows; the
    others take the rest (with a spill, some of the group are left out)."""
    ranks = [start + 1 + i for i in range(places)]
    fixed = {
        c: shown[(c.doc_id, c.chunk_index)] for c in group if shown.get((c.doc_id, c.chunk_index)) in ranks
    }
    free_ranks = [r for r in ranks if r not in fixed.values()]
    free = [c for c in group if c not in fixed]
    if len(free) < len(free_ranks):
        return  # the blocks show ranks this group cannot fill: no order of it explains them
    for perm in itertools.permutations(free, len(free_ranks)):
        by_rank = {r: c for c, r in fixed.items()} | dict(zip(free_ranks, perm, strict=True))
        yield tuple(by_rank[r].model_copy(update={"original_rank": r}) for r in ranks)
        if len(free) > 4:
            return  # large groups: the default order only


@dataclass(frozen=True)
class LookupTruth:
    unfiltered: Attempt
    filtered: Attempt | None = None


def low_quality_readings(attempt: Attempt, config: PostProcessConfig) -> set[bool]:
    """Every "low quality" decision a conforming implementation may reach on this attempt's result.

    Dense: the L2 formula. Hybrid: a rank mapping (rank 1 maps to 1.0: never low when anything is kept),
    or an absolute similarity of the attached distance, which the kit cannot know without the
    implementation's own normalizer: then either decision conforms.
    """
    kept = kept_candidates(attempt.candidates, config, limit=config.return_n)
    if not kept:
        return {True}
    tolerance = QUALITY_TOLERANCE + DISTANCE_TOLERANCE / config.max_l2_distance
    if canonical(kept[0].score_label) != "dense":
        return {True, False} if all(c.dense_distance is not None for c in kept) else {False}
    qualities = [dense_quality(c.score, config.max_l2_distance) for c in kept]
    decisions: set[bool] = set()
    for top in (qualities[0], max(qualities)):
        decisions.add(top < config.reference_threshold)
        if abs(top - config.reference_threshold) <= tolerance:
            decisions.update((True, False))
    return decisions


def check_lookup(
    request: LookupRequest, reply: LookupReply, truth: LookupTruth, *, low: set[bool] | None = None
) -> list[Violation]:
    """:func:`_check_lookup`, with evidence rewritten into the legacy L2 backfill counted under R2."""
    return _l2_backfill(_check_lookup(request, reply, truth, low=low), request, reply, truth)


def _l2_backfill(
    found: list[Violation], request: LookupRequest, reply: LookupReply, truth: LookupTruth
) -> list[Violation]:
    """Hybrid evidence whose every block is labelled dense (or ``l2_distance``) with the dense formula's
    quality of its chunk's dense distance is the legacy L2 backfill: the glue rewrote the hybrid hits'
    scores into their dense L2 and their labels into ``l2_distance`` before post-process. That is what
    R2's sentence forbids ("SHALL NOT replace hybrid hit scores with a parallel dense L2 map ... post-process
    input scores SHALL NOT be forced to dense L2 solely for threshold compatibility"), wherever it shows:
    the wrong labels and qualities it causes count there, not under R1 or R3 (readings 18)."""
    if request.mode != "hybrid" or not reply.blocks or not failing(found) or not request.query_text.strip():
        return found  # a blank query's hybrid order is the dense one: a dense fallback looks the same
    hybrid = [
        c
        for attempt in (truth.filtered, truth.unfiltered)
        if attempt is not None
        for c in (*attempt.candidates, *attempt.spill)
    ]
    distances = {(c.doc_id, c.chunk_index): c.dense_distance for c in hybrid}
    ranked = {(c.doc_id, c.chunk_index, c.original_rank) for c in hybrid}
    max_l2 = request.config.max_l2_distance
    for b in reply.blocks:
        d = distances.get((b.doc_id, b.chunk_index))
        if canonical(b.score_label) != "dense" or d is None:
            return found
        if (b.doc_id, b.chunk_index, b.original_rank) not in ranked:
            return found  # not the hybrid hits at their hybrid ranks: a dense search, not a backfill
        if abs(b.quality_score - dense_quality(d, max_l2)) > QUALITY_TOLERANCE + DISTANCE_TOLERANCE / max_l2:
            return found
    out: list[Violation] = []
    for v in found:
        if v.rule.fails and v.requirement in ("score-labels", "single-normalizer"):
            v = violation("l2-relabel", v.item, v.expected, f"{v.actual} (seen by {v.rule.id})")
            v = Violation(v.rule, v.item, v.expected, v.actual, "the evidence is the legacy L2 backfill")
        out.append(v)
    return out


def _check_lookup(
    request: LookupRequest, reply: LookupReply, truth: LookupTruth, *, low: set[bool] | None = None
) -> list[Violation]:
    """Every rule the spec fixes for one lookup reply; no failing finding means the spec allows it.

    The evidence is judged first, as the post-processing of the attempt the reply names: a wrong quality
    or a wrong cap also moves the retry decision, and the report should name the cause. Then the path.
    ``low`` is the filtered result's "low quality" as the implementation's own normalizer or post-process
    decides it (the judge asks); without it, every reading the spec allows (:func:`low_quality_readings`).
    """
    config = request.config
    if request.category is None:
        found = _evidence(truth.unfiltered, reply, config)
        if not failing(found) and reply.path != "unfiltered":
            found.append(
                violation(
                    "path-name",
                    "lookup without a category",
                    "path 'unfiltered' (nothing to retry)",
                    repr(reply.path),
                )
            )
        return found
    assert truth.filtered is not None, "a filtered lookup needs the filtered attempt's truth"
    found = []
    if reply.path == "unfiltered":
        found.append(
            violation(
                "path-name",
                f"lookup filtered by category {request.category!r}",
                "'filtered' or 'unfiltered_retry'",
                "'unfiltered' (read as the retry)",
            )
        )
    if reply.path == "filtered":
        found += _evidence(truth.filtered, reply, config)
    else:
        found += _retry_evidence(truth, reply, config)
    if failing(found):
        return found
    item = f"lookup filtered by category {request.category!r}"
    if reply.path == "filtered" and reply.is_low_quality:
        return [
            *found,
            violation(
                "retry-path",
                item,
                "'unfiltered_retry': its own gate reports the filtered result low quality",
                "'filtered' with isLowQuality true",
            ),
        ]
    decisions = low if low is not None else low_quality_readings(truth.filtered, config)
    allowed = {("unfiltered_retry" if d else "filtered") for d in decisions}
    retried = reply.path != "filtered"
    if ("unfiltered_retry" if retried else "filtered") not in allowed:
        state = "low quality" if allowed == {"unfiltered_retry"} else "not low quality"
        found.append(
            violation(
                "retry-path",
                item,
                " or ".join(sorted(map(repr, allowed))) + f" (the filtered result is {state})",
                repr(reply.path),
            )
        )
    return found


def _evidence(attempt: Attempt, reply: PostProcessReply, config: PostProcessConfig) -> list[Violation]:
    """The reply as a post-processing of the attempt's hits (in some order of its ties)."""
    known = {(c.doc_id, c.chunk_index) for c in (*attempt.candidates, *attempt.spill)}
    strangers = [b for b in reply.blocks if (b.doc_id, b.chunk_index) not in known]
    if strangers:
        # Blocks that are no hit of a conforming search: the retrieval differs, and every quality or gate
        # check on top of it would only repeat that.
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
    moved = _moved_ranks(attempt, reply.blocks)
    if moved:
        # The blocks' originalRanks are a search's ranks, but not this search's: the retrieval differs.
        # (Ranks renumbered 1..m are the protocol's shape: noted by the post-process check instead.)
        want = ", ".join(f"{c.doc_id}#{c.chunk_index}@{c.original_rank}" for c in attempt.candidates)
        where = f" in category {attempt.category!r}" if attempt.category else ""
        return [
            violation(
                "lookup-retrieval",
                f"evidence{where} (docId#chunkIndex@originalRank)",
                f"the hits of the search the mode names, at their ranks: {want or '(none)'}",
                ", ".join(moved),
            )
        ]
    first: list[Violation] | None = None
    for candidates in attempt.orders(reply.blocks):
        found = check_post_process(
            candidates, config, reply, distance_tolerance=DISTANCE_TOLERANCE, attached=False
        )
        if not failing(found):
            return found
        first = found if first is None else first
    return first or []


def _moved_ranks(attempt: Attempt, blocks: Sequence[Block]) -> list[str]:
    """Blocks whose originalRank is no rank their chunk can have in the attempt (its tie group's ranks
    included), when the blocks' ranks are not simply renumbered 1..m."""
    if [b.original_rank for b in blocks] == list(range(1, len(blocks) + 1)):
        return []
    allowed: dict[ChunkKey, set[int]] = {}
    for index, c in enumerate(attempt.candidates):
        allowed.setdefault((c.doc_id, c.chunk_index), set()).add(index + 1)
    end = len(attempt.candidates)
    for start, stop in attempt.ties:
        ranks = set(range(start + 1, stop + 1))
        members = list(attempt.candidates[start:stop]) + (list(attempt.spill) if stop == end else [])
        for c in members:
            allowed.setdefault((c.doc_id, c.chunk_index), set()).update(ranks)
    return [
        f"{b.doc_id}#{b.chunk_index}@{b.original_rank}"
        for b in blocks
        if b.original_rank not in allowed.get((b.doc_id, b.chunk_index), set())
    ]


def _retry_evidence(truth: LookupTruth, reply: LookupReply, config: PostProcessConfig) -> list[Violation]:
    """The retry's evidence: the unfiltered result replacing the filtered one, or merged with it."""
    replaced = _evidence(truth.unfiltered, reply, config)
    if not failing(replaced):
        return replaced
    merged = _merged(truth, reply, config)
    if not failing(merged):
        return merged
    if _from_the_unfiltered_search(truth, reply.blocks) and not any(
        v.rule.id == "lookup-retrieval" for v in replaced
    ):
        # The retry's hits at the retry's ranks, post-processed wrongly (its best chunk dropped by a
        # reorder and a cut, say): a post-processing fault, say how.
        return replaced
    best = truth.unfiltered.candidates[0] if truth.unfiltered.candidates else None
    shown = {(b.doc_id, b.chunk_index) for b in reply.blocks}
    if best is not None and (best.doc_id, best.chunk_index) not in shown:
        return [v for v in merged if v.rule.id == "retry-evidence"]  # the retry's result is not there at all
    unfiltered = {(c.doc_id, c.chunk_index) for c in (*truth.unfiltered.candidates, *truth.unfiltered.spill)}
    only_unfiltered = all((b.doc_id, b.chunk_index) in unfiltered for b in reply.blocks)
    if only_unfiltered and not any(v.rule.id == "lookup-retrieval" for v in replaced):
        return replaced  # the unfiltered result, post-processed wrongly: say how
    return merged


def _from_the_unfiltered_search(truth: LookupTruth, blocks: Sequence[Block]) -> bool:
    """Whether every block is a hit of the unfiltered search at a rank that search gives it, and the
    blocks are not the filtered search's hits at its ranks (renumbered ranks 1..m say neither)."""
    if not blocks or [b.original_rank for b in blocks] == list(range(1, len(blocks) + 1)):
        return False
    unfiltered = {(c.doc_id, c.chunk_index) for c in (*truth.unfiltered.candidates, *truth.unfiltered.spill)}
    if not all((b.doc_id, b.chunk_index) in unfiltered for b in blocks) or _moved_ranks(
        truth.unfiltered, blocks
    ):
        return False
    return truth.filtered is None or bool(_moved_ranks(truth.filtered, blocks))


def _merged(truth: LookupTruth, reply: LookupReply, config: PostProcessConfig) -> list[Violation]:
    """The retry merged with the filtered result: the reading the spec leaves loosest.

    Blocks are hits of either attempt, each chunk once, each attempt's hits in that attempt's order (the
    merge may interleave the two, and report their own ranks or renumber them), within the per-document
    cap and return-n, with the unfiltered retry's best chunk; qualities are those of their candidates
    (the dense formula on their distance; a rank mapping on the merged ranks, or an absolute similarity
    of denseDistance); the gates follow the blocks.
    """
    assert truth.filtered is not None
    tolerance = QUALITY_TOLERANCE + DISTANCE_TOLERANCE / config.max_l2_distance
    sources = {
        name: {(c.doc_id, c.chunk_index): c for c in (*attempt.candidates, *attempt.spill)}
        for name, attempt in (("filtered", truth.filtered), ("unfiltered", truth.unfiltered))
    }
    keys = [(b.doc_id, b.chunk_index) for b in reply.blocks]
    shown = ", ".join(f"{d}#{i}@{b.original_rank}" for (d, i), b in zip(keys, reply.blocks, strict=True))
    found: list[Violation] = []
    matched = []  # each block with its candidate, at the block's (possibly renumbered) rank
    by_source: dict[str, list[tuple[Block, WireCandidate]]] = {"unfiltered": [], "filtered": []}
    for block, key in zip(reply.blocks, keys, strict=True):
        name = "unfiltered" if key in sources["unfiltered"] else "filtered"
        source = sources[name].get(key)
        if source is None:
            found.append(
                violation(
                    "retry-evidence",
                    f"block {block.doc_id}#{block.chunk_index}",
                    "a hit of the filtered or the unfiltered search",
                    "no such hit",
                )
            )
            continue
        matched.append((block, source.model_copy(update={"original_rank": block.original_rank})))
        by_source[name].append((block, source))
    if found:
        return found
    item = "merged retry evidence"
    # Ranks of two searches are not comparable: each search's hits keep that search's order (ties in
    # any order), and the merge may interleave them (or renumber them) as it likes.
    attempts = {"filtered": truth.filtered, "unfiltered": truth.unfiltered}
    for name, by_key in sources.items():
        place = attempts[name].places()
        own = [place[k] for k in keys if k in by_key and k not in sources[_other(name)]]
        if own != sorted(own):
            found.append(violation("rank-order", item, f"the {name} search's hits in its rank order", shown))
    if len(keys) != len(set(keys)):
        found.append(violation("dedup", item, "each chunk once", shown))
    over = {d: n for d, n in Counter(d for d, _ in keys).items() if n > config.max_chunks_per_document}
    if over:
        found.append(
            violation(
                "per-document-cap",
                item,
                f"at most {config.max_chunks_per_document} per docId",
                f"{over} ({shown})",
            )
        )
    if len(keys) > config.return_n:
        found.append(violation("return-n", item, f"at most {config.return_n} blocks", shown))
    best = truth.unfiltered.candidates[0] if truth.unfiltered.candidates else None
    # The chunks that tie with the best (an RRF tie: swapped ranks in the legs) are each a best chunk: a
    # conforming search returns a tie group in any order.
    unfiltered_place = truth.unfiltered.places()
    tied_best = {k for k, at in unfiltered_place.items() if at == 0}
    # A merge that puts the filtered hits first may fill return-n with them: the retry's hits are then
    # all cut, as return-n cuts any merge (readings 7). Short of return-n, the merge holds the retry's best.
    filled_by_filtered = len(keys) == config.return_n and all(k in sources["filtered"] for k in keys)
    if best is not None and not tied_best & set(keys) and not filled_by_filtered:
        found.append(
            violation(
                "retry-evidence",
                item,
                f"the unfiltered search's best chunk {best.doc_id}#{best.chunk_index} (merged or replacing)",
                shown or "no blocks",
            )
        )
    found += block_labels([(b, c) for b, c in matched], attached=False)
    found += _merged_qualities(matched, by_source, config, tolerance)
    return found + gate_violations(reply, [b.quality_score for b in reply.blocks], config, tolerance)


def _merged_qualities(
    matched: Sequence[tuple[Block, WireCandidate]],
    by_source: dict[str, list[tuple[Block, WireCandidate]]],
    config: PostProcessConfig,
    tolerance: float,
) -> list[Violation]:
    """The merged blocks' qualities: one batch on the merged ranks, or each attempt's own batch."""
    kind = kind_of([c for _, c in matched])
    merged = block_qualities(kind, matched, config, tolerance)
    if not failing(merged):
        return merged
    per_source = [v for group in by_source.values() for v in block_qualities(kind, group, config, tolerance)]
    return per_source if not failing(per_source) else merged


def _other(name: str) -> str:
    return "unfiltered" if name == "filtered" else "filtered"

"""The spec's rules as data: what each one says, the sentence it enforces, and a violation of it.

Rule ids are stable (reports and the mutation matrix use them). Every rule cites the words it enforces:
``cites`` holds fragments quoted verbatim from the pinned spec
(``tests/unit/conformance/judging/test_rules.py`` checks that each one is there), and ``design_note``
the section of the design note where the spec is silent and the note is explicit (the spec wins where
the two differ). A rule whose check goes beyond
those words (the protocol's own vocabulary, a shape the kit chose, a reading stricter than the words)
is a *note*: :attr:`Rule.fails` is False, and a reply that breaks it is reported, never failed
(``features/spec/readings.md`` lists every rule with its sentence).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from types import MappingProxyType

__all__ = [
    "REQUIREMENT_NUMBERS",
    "RULES",
    "Rule",
    "SpecViolationError",
    "Violation",
    "expect",
    "failing",
    "noted",
    "violation",
]

REQUIREMENT_NUMBERS = MappingProxyType(
    {
        "score-labels": "R1",
        "no-l2-overwrite": "R2",
        "single-normalizer": "R3",
        "rank-order": "R4",
        "quality-gates": "R5",
        "dense-baseline": "R6",
        "dense-distance-gates": "R7",
    }
)
"""Each requirement id (a feature file's ``@req`` tag) and its number in the spec's order."""


@dataclass(frozen=True)
class Rule:
    """One checkable rule: what it says, the words it enforces, and whether breaking it fails."""

    id: str
    requirement: str  # the requirement id (a feature file's @req tag)
    says: str  # the rule in the kit's words
    cites: tuple[str, ...] = ()  # verbatim fragments of the pinned spec
    design_note: str | None = None  # "§4.3: ...": where the spec is silent and the design note explicit
    reading: int | None = None  # the section of readings.md where the spec leaves room
    fails: bool = True  # False: a note (the spec's words do not forbid what it finds)

    @property
    def number(self) -> str:
        """The requirement's number in the spec (``R1`` ... ``R7``)."""
        return REQUIREMENT_NUMBERS.get(self.requirement, "?")


def _rule(
    id: str,
    requirement: str,
    says: str,
    *cites: str,
    note: str | None = None,
    reading: int | None = None,
    fails: bool = True,
) -> Rule:
    return Rule(id, requirement, says, cites, note, reading, fails)


_LABEL = "SHALL set `scoreLabel` to `dense` or `hybrid` (after any legacy alias canonicalization)"
_EMISSIONS = (
    "The system SHALL NOT treat `bm25_only_no_dense`, `rrf_fused`, or `l2_distance` as distinct first-class "
    "labels in new emissions."
)
_HYBRID_ORDER = "hit order SHALL follow the hybrid/RRF result order via `originalRank`"
_DENSE_ONLY = "search SHALL call dense ANN only"
_RANK_ORDER = "SHALL order candidates by `originalRank` ascending (stable tie-break allowed)"
_CAPS = "only the best-ranked (lowest `originalRank`) up to the cap SHALL remain"
_DEDUP = "(subject only to dedup/caps removing one of them)"
_GATES = (
    "category-filter low-quality retry decisions SHALL use the normalized `qualityScore`, not raw "
    "L2-under-hybrid fakes and not keyword-boosted final scores"
)
_RETRY_NOTE = "§4.3: filtered -> unfiltered retry when isLowQuality (no usable evidence, or topSimilarity "
_RETRY_NOTE += "< referenceThreshold); the retry result is merged or replaces the filtered one"

_ALL = (
    # -- R1: primary score labels ----------------------------------------------------------------
    # The label's own words: the sentence on quality normalization is alias-quality's.
    _rule("canonical-label", "score-labels", "legacy aliases canonicalize: l2_distance -> dense, rrf_fused "
          "and bm25_only_no_dense -> hybrid; dense and hybrid stay",
          "`dense` or `hybrid` (after any legacy alias canonicalization)", _EMISSIONS, reading=8),
    _rule("hit-label", "score-labels", "each hit SHALL have scoreLabel canonicalizing to the search mode "
          "(dense or hybrid)",
          "each hit SHALL have `scoreLabel` canonicalizing to `dense`",
          "each hit SHALL have `scoreLabel` canonicalizing to `hybrid`"),
    _rule("block-label", "score-labels", "an evidence block carries the canonical label of its candidate",
          _LABEL),
    _rule("emitted-alias", "score-labels", "new emissions (search hits, evidence blocks) carry dense or "
          "hybrid, never a legacy alias", _LABEL, _EMISSIONS, reading=20),
    _rule("alias-quality", "score-labels", "quality normalization SHALL canonicalize a legacy alias before "
          "computing quality: an alias gets the qualityScore its canonical label gets",
          "quality normalization SHALL canonicalize it to `dense` or `hybrid` respectively before "
          "computing quality"),
    _rule("lookup-retrieval", "score-labels", "lookup evidence comes from the search the mode names: the "
          "dense nearest neighbours, or the hybrid/RRF order, via originalRank",
          "Knowledge search hits used by `lookup_knowledge`", _HYBRID_ORDER, _DENSE_ONLY),
    _rule("ranks", "score-labels", "originalRank numbers the hits of one search 1..n, best first",
          _HYBRID_ORDER, "rank `1` SHALL map to `1.0`"),
    _rule("dense-score", "score-labels", "in dense mode, score SHALL be the dense L2 distance (Milvus: "
          "squared L2) of the hit", "`score` SHALL be the dense L2 distance", reading=1),
    _rule("hybrid-order", "score-labels", "hit order SHALL follow the hybrid/RRF result order via "
          "originalRank: RRF over the dense and BM25 lists", _HYBRID_ORDER, reading=19),
    _rule("hybrid-parameters", "score-labels", "the hybrid order uses the RRF k and sub-search limit the "
          "request carries (the protocol's; the spec names neither)", reading=19, fails=False),
    # -- R2: no L2 overwrite -----------------------------------------------------------------------
    _rule("no-bm25-only-label", "no-l2-overwrite", "the system SHALL NOT emit bm25_only_no_dense as the "
          "primary score label on new hits",
          "the system SHALL NOT emit `bm25_only_no_dense` as the primary score label on new hits"),
    _rule("hybrid-score", "no-l2-overwrite", "hybrid hit scores SHALL NOT be replaced with dense L2 (or a "
          "function of it) where the fused order differs from the dense one",
          "SHALL NOT replace hybrid hit scores with a parallel dense L2 map",
          "post-process input scores SHALL NOT be forced to dense L2 solely for threshold compatibility",
          reading=9),
    _rule("l2-relabel", "no-l2-overwrite", "a hybrid hit or evidence block SHALL NOT be relabelled "
          "l2_distance: that is the legacy L2 backfill, a parallel dense L2 map in the hybrid score's place",
          "SHALL NOT replace hybrid hit scores with a parallel dense L2 map",
          note="§2.2: the backfill writes the L2 into score and changes the label to l2_distance"),
    _rule("hybrid-score-scale", "no-l2-overwrite", "hybrid hit scores are the fused score, or ordered like "
          "it (the spec forbids only dense L2)", reading=9, fails=False),
    _rule("no-placeholder", "no-l2-overwrite", "the system SHALL NOT assign max-L2 weak placeholders to hits "
          "only BM25 found, as score or as denseDistance",
          "SHALL NOT assign max-L2 weak placeholders under a `bm25_only_*` primary label",
          "SHALL NOT replace hybrid hit scores with a parallel dense L2 map", reading=14),
    # -- R3: the single normalizer -------------------------------------------------------------------
    _rule("quality-range", "single-normalizer", "qualityScore lies in [0, 1]",
          "compute a `qualityScore` in `[0, 1]` (higher is better)"),
    _rule("dense-formula", "single-normalizer", "dense qualityScore SHALL equal max(0, 1 - min(d, "
          "maxL2Distance) / maxL2Distance), null score -> 0",
          "`qualityScore` SHALL equal `max(0, 1 - min(d, maxL2Distance) / maxL2Distance)` (null score → 0)",
          reading=11),
    _rule("rank-one", "single-normalizer", "hybrid rank 1 SHALL map to 1.0",
          "rank `1` SHALL map to `1.0` when `n >= 1`", reading=4),
    _rule("rank-monotone", "single-normalizer", "hybrid qualityScore SHALL be a monotonically "
          "non-increasing function of originalRank over the batch (equal ranks, equal quality)",
          "`qualityScore` SHALL be a monotonically non-increasing function of `r` over that batch",
          reading=4),
    _rule("one-normalizer", "single-normalizer", "one normalizer API produces every qualityScore: an "
          "evidence block carries what the normalizer answers for its candidate",
          "using one normalizer API that branches only on canonical label", reading=4),
    _rule("no-raw-magnitude", "single-normalizer", "the hybrid mapping SHALL NOT require dense L2 or RRF "
          "raw magnitude: the same ranks give the same qualities whatever the fused scores",
          "the mapping SHALL NOT require dense L2 or RRF raw magnitude"),
    # -- R4: rank order ----------------------------------------------------------------------------
    _rule("rank-order", "rank-order", "post-processing SHALL order candidates by originalRank ascending "
          "(stable tie-break allowed)", _RANK_ORDER, reading=10),
    _rule("no-boost", "rank-order", "post-processing SHALL NOT re-order or rescore by L0 domain/entity/"
          "keyword/source_type hints: changing the hints changes the accepted blocks and their qualities "
          "in nothing",
          "It SHALL NOT re-order primarily by L0 domain/entity/keyword/source_type additive boosts.",
          "A SHALL appear before B among accepted blocks"),
    _rule("evidence-identity", "rank-order", "each evidence block is one of the candidates (same docId "
          "and chunkIndex)", "after post-process acceptance order, A SHALL appear before B among accepted "
          "blocks"),
    _rule("evidence-key", "rank-order", "a block's evidenceKey is docId#chunkIndex and its originalRank "
          "its candidate's (the protocol's shape)", note="§5.5: evidenceKey dedup", fails=False),
    _rule("dedup", "rank-order", "a chunk (docId#chunkIndex) is accepted at most once", _DEDUP,
          note="§1, §5.5: chunk-level evidence identity docId#chunkIndex, evidenceKey dedup"),
    _rule("per-document-cap", "rank-order", "no more than rag.max-chunks-per-document blocks share a docId",
          "more than `rag.max-chunks-per-document` chunks share a docId", _CAPS),
    _rule("return-n", "rank-order", "rag.return-n SHALL still bound total blocks",
          "`rag.return-n` SHALL still bound total blocks"),
    _rule("best-ranks-kept", "rank-order", "only dedup, the per-document cap and return-n remove "
          "candidates, walked in originalRank order: the best-ranked candidates remain", _CAPS, _DEDUP,
          reading=10),
    _rule("dropped", "rank-order", "a reported dropped list names every removed candidate once (the "
          "protocol's optional field; reason codes are the implementation's)", reading=16, fails=False),
    # -- R5: gates -----------------------------------------------------------------------------------
    _rule("low-quality", "quality-gates", "low quality SHALL compare the top qualityScore to the reference "
          "threshold: no evidence, or the top qualityScore below it",
          "low-quality detection SHALL compare the top `qualityScore` to the configured reference threshold",
          note="§4.3: isLowQuality = no usable evidence, or topSimilarity < referenceThreshold", reading=3),
    _rule("top-quality", "quality-gates", "topSimilarity (topQualityScore) is the top qualityScore",
          "`topSimilarity` (or equivalent top quality field)", reading=3),
    _rule("top-quality-empty", "quality-gates", "with no evidence, topQualityScore is null or 0 (the "
          "protocol's shape)", fails=False),
    _rule("relevance-hints", "quality-gates", "the relevance level SHALL use qualityScore only: the same "
          "qualities give the same level, whatever the L0 hints",
          "`relevance_level`, completeness hints, `topSimilarity`", "SHALL use the normalized `qualityScore`",
          "SHALL NOT require L0 hint contains-match", reading=12),
    _rule("gates-hints", "quality-gates", "low quality and topSimilarity SHALL use qualityScore only: L0 "
          "hints change neither", "SHALL use the normalized `qualityScore`",
          "SHALL NOT require L0 hint contains-match to treat the result as usable when quality meets "
          "threshold"),
    _rule("category-filter", "quality-gates", "a filtered attempt searches the category only: its hits are "
          "the search's within that category", _GATES,
          note="§5.5: L0 navigation, category filter (on failure, the unfiltered retry)", reading=21),
    _rule("retry-path", "quality-gates", "the category-filter retry runs exactly when the filtered result "
          "is low quality", _GATES, note=_RETRY_NOTE, reading=7),
    _rule("path-name", "quality-gates", "a lookup without a category reports path 'unfiltered' (the "
          "protocol's vocabulary)", fails=False),
    _rule("retry-evidence", "quality-gates", "after the retry, the evidence is the retry's result, merged "
          "with or replacing the filtered one, in rank order, deduplicated, within the caps and return-n",
          _GATES, note=_RETRY_NOTE, reading=7),
    # -- R6: dense baseline --------------------------------------------------------------------------
    # "Dense ANN" is what dense mode runs: its hits are the nearest neighbours. R1's dense scenario fixes
    # their labels and scores, not which chunks they are (readings 18).
    _rule("dense-hits", "dense-baseline", "dense hits are the query's nearest neighbours (within the "
          "category filter), by ascending L2 distance via originalRank",
          "`retrieval.search.mode` is `dense` and search returns hits", _DENSE_ONLY),
    _rule("dense-only", "dense-baseline", "mode dense SHALL call dense ANN only, on the collection hybrid "
          "mode searches: no hybrid, keyword or sparse search, and no scalar query that can return rows the "
          "dense search did not", _DENSE_ONLY, "a same-collection baseline that runs dense ANN only",
          reading=17),
    # -- R7: optional dense distance -----------------------------------------------------------------
    _rule("dense-distance-label", "dense-distance-gates", "a hybrid hit or block with denseDistance SHALL "
          "still canonicalize to hybrid", "scoreLabel SHALL still canonicalize to hybrid"),
    _rule("dense-distance-value", "dense-distance-gates", "an attached denseDistance is the hit's dense L2 "
          "distance", "When hybrid search attaches an optional dense L2 distance for a hit", reading=15),
    _rule("dense-distance-order", "dense-distance-gates", "with denseDistance attached, post-process order "
          "still follows originalRank from hybrid results",
          "post-process sort order SHALL still follow originalRank from hybrid results",
          "Retrieval order SHALL remain the hybrid/RRF order"),
    _rule("dense-distance-quality", "dense-distance-gates", "with denseDistance, a hybrid qualityScore is an "
          "absolute similarity from that distance (never rising with it) or a rank mapping",
          "quality normalization and low-quality gates MAY use that distance for absolute similarity",
          reading=5),
    _rule("dense-distance-formula", "dense-distance-gates", "the similarity from denseDistance is the dense "
          "L2 formula with the configured maxL2Distance (the kit's reading)", reading=5, fails=False),
)  # fmt: skip

RULES = MappingProxyType({rule.id: rule for rule in _ALL})
"""Every rule by id."""


@dataclass(frozen=True)
class Violation:
    """One broken rule: where, what the spec allows, and what the implementation answered.

    ``varied`` says which counterfactual question moved the finding to its rule (see
    :mod:`conformance.judging._attribution`), e.g. "without the L0 hints the same request conforms".
    """

    rule: Rule
    item: str
    expected: str
    actual: str
    varied: str | None = None

    @property
    def requirement(self) -> str:
        return self.rule.requirement

    def fail(self) -> SpecViolationError:
        """This violation as the error a Then step raises (the step's name says what it asked)."""
        return SpecViolationError("", [self])

    def __str__(self) -> str:
        varied = f" ({self.varied})" if self.varied else ""
        return (
            f"[{self.rule.number} {self.rule.requirement}: {self.rule.id}] {self.item}: expected "
            f"{self.expected}; got {self.actual}{varied}. Rule: {self.rule.says}"
        )

    def note(self) -> str:
        """The finding as a report note (for rules that do not fail)."""
        return f"note [{self.rule.id}] {self.item}: expected {self.expected}; got {self.actual}"


def violation(rule_id: str, item: str, expected: str, actual: str) -> Violation:
    """A violation of the rule ``rule_id`` (a typo in the id is the kit's bug and raises KeyError)."""
    return Violation(RULES[rule_id], item, expected, actual)


def failing(found: Iterable[Violation]) -> list[Violation]:
    """The findings that fail a reply (rules the spec's words back)."""
    return [v for v in found if v.rule.fails]


def noted(found: Iterable[Violation]) -> list[Violation]:
    """The findings that are only reported (rules beyond the spec's words)."""
    return [v for v in found if not v.rule.fails]


def expect(holds: bool, rule_id: str, item: str, expected: str, actual: str) -> None:
    """For Then steps: unless ``holds``, fail with a violation of ``rule_id`` (and so of its requirement)."""
    if not holds:
        raise violation(rule_id, item, expected, actual).fail()


class SpecViolationError(AssertionError):
    """A reply the spec does not allow. An AssertionError: the scenario FAILS (it is not ERRORED).

    ``violations`` name each broken rule and its requirement; the report counts the failure there.
    """

    def __init__(self, operation: str, violations: Sequence[Violation]) -> None:
        self.operation = operation
        self.violations = tuple(violations)
        shown = self.violations[:8]
        more = len(self.violations) - len(shown)
        first = self.violations[0]
        # ``operation`` names the reply ("post_process reply"); a Then step's own check has none to
        # name (the failed step's text, which the report puts first, says what was asked).
        headline = (
            f"{operation + ': ' if operation else ''}[{first.rule.number} {first.rule.requirement}: "
            f"{first.rule.id}] {first.item}: expected {first.expected}; got {first.actual}"
        )
        if first.varied:
            headline += f" ({first.varied})"
        if len(self.violations) > 1:
            headline += f" (and {len(self.violations) - 1} more)"
        lines = [headline] + [f"  - {v}" for v in shown]
        if more:
            lines.append(f"  ... and {more} more")
        super().__init__("\n".join(lines))

    @property
    def requirements(self) -> tuple[str, ...]:
        """The requirement ids broken, in first-seen order."""
        return tuple(dict.fromkeys(v.requirement for v in self.violations))

    @property
    def rules(self) -> tuple[str, ...]:
        return tuple(dict.fromkeys(v.rule.id for v in self.violations))

"""The spec's rules as data: what each one says, which requirement it belongs to, and a violation of it.

Rule ids are stable (reports and the mutation matrix use them). Each rule's ``says`` is the spec's own
sentence where the spec has one, or the kit's reading of it (see ``features/spec/readings.md``).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from types import MappingProxyType

__all__ = ["RULES", "Rule", "SpecViolationError", "Violation", "expect", "violation"]


@dataclass(frozen=True)
class Rule:
    """One checkable rule of the spec."""

    id: str
    requirement: str  # the requirement id (a feature file's @req tag)
    says: str


_ALL = (
    # -- R1: primary score labels ----------------------------------------------------------------
    Rule("canonical-label", "score-labels", "legacy aliases canonicalize: l2_distance -> dense, "
         "rrf_fused and bm25_only_no_dense -> hybrid; dense and hybrid stay"),
    Rule("hit-label", "score-labels", "each hit SHALL have scoreLabel canonicalizing to the search mode "
         "(dense or hybrid)"),
    Rule("block-label", "score-labels", "an evidence block keeps the canonical label of its candidate"),
    Rule("alias-quality", "score-labels", "quality normalization SHALL canonicalize a legacy alias before "
         "computing quality: an alias gets the qualityScore its canonical label gets"),
    Rule("lookup-retrieval", "score-labels", "lookup evidence comes from the search the mode names: the "
         "dense nearest neighbours, or the hybrid/RRF order (with the requested RRF k), via originalRank"),
    Rule("ranks", "score-labels", "originalRank numbers the hits of one search 1..n, best first"),
    Rule("dense-score", "score-labels", "in dense mode, score SHALL be the dense L2 distance (Milvus: "
         "squared L2) of the hit"),
    Rule("dense-hits", "score-labels", "dense hits are the query's nearest neighbours (within the category "
         "filter), by ascending L2 distance via originalRank"),
    Rule("hybrid-order", "score-labels", "hit order SHALL follow the hybrid/RRF result order via "
         "originalRank (RRF with the requested k over the dense and BM25 lists)"),
    # -- R2: no L2 overwrite -----------------------------------------------------------------------
    Rule("no-bm25-only-label", "no-l2-overwrite", "the system SHALL NOT emit bm25_only_no_dense as the "
         "primary score label on new hits"),
    Rule("hybrid-score", "no-l2-overwrite", "hybrid hit scores SHALL NOT be replaced with dense L2: a "
         "hybrid score is the fused score, or at least ordered like it"),
    Rule("no-placeholder", "no-l2-overwrite", "the system SHALL NOT assign max-L2 weak placeholders to hits "
         "only BM25 found, as score or as denseDistance"),
    # -- R3: the single normalizer -------------------------------------------------------------------
    Rule("quality-range", "single-normalizer", "qualityScore lies in [0, 1]"),
    Rule("dense-formula", "single-normalizer", "dense qualityScore SHALL equal max(0, 1 - min(d, "
         "maxL2Distance) / maxL2Distance), null score -> 0"),
    Rule("rank-one", "single-normalizer", "hybrid rank 1 SHALL map to 1.0"),
    Rule("rank-monotone", "single-normalizer", "hybrid qualityScore SHALL be a monotonically "
         "non-increasing function of originalRank over the batch (equal ranks, equal quality)"),
    Rule("one-normalizer", "single-normalizer", "one normalizer API produces every qualityScore: an "
         "evidence block carries what the normalizer answers for its candidate"),
    Rule("no-raw-magnitude", "single-normalizer", "the hybrid mapping SHALL NOT require dense L2 or RRF "
         "raw magnitude: the same ranks give the same qualities whatever the fused scores"),
    Rule("dense-distance-quality", "single-normalizer", "with denseDistance, hybrid quality is the L2 "
         "formula (the normalizer's dense branch, configured maxL2Distance) on that distance, or a rank "
         "mapping"),
    # -- R4: rank order ----------------------------------------------------------------------------
    Rule("rank-order", "rank-order", "post-processing SHALL order candidates by originalRank ascending "
         "(stable tie-break allowed)"),
    Rule("no-boost", "rank-order", "post-processing SHALL NOT re-order or rescore by L0 domain/entity/"
         "keyword/source_type hints: changing the hints changes the accepted blocks and their qualities "
         "in nothing"),
    Rule("evidence-identity", "rank-order", "each evidence block is one of the candidates (same docId, "
         "chunkIndex and originalRank) and its evidenceKey is docId#chunkIndex"),
    Rule("dedup", "rank-order", "a chunk (docId#chunkIndex) is accepted at most once"),
    Rule("per-document-cap", "rank-order", "no more than rag.max-chunks-per-document blocks share a docId"),
    Rule("return-n", "rank-order", "rag.return-n SHALL still bound total blocks"),
    Rule("best-ranks-kept", "rank-order", "only dedup, the per-document cap and return-n remove candidates, "
         "walked in originalRank order: the best-ranked candidates remain"),
    Rule("dropped", "rank-order", "a reported dropped list names every removed candidate once, with a "
         "true reason: duplicate, per_document_cap or return_n"),
    # -- R5: gates -----------------------------------------------------------------------------------
    Rule("low-quality", "quality-gates", "low quality SHALL compare the top qualityScore to the reference "
         "threshold: no evidence, or the top qualityScore below it"),
    Rule("top-quality", "quality-gates", "topSimilarity (topQualityScore) is the top qualityScore"),
    Rule("relevance-hints", "quality-gates", "the relevance level SHALL use qualityScore only: the same "
         "qualities give the same level, whatever the L0 hints"),
    Rule("gates-hints", "quality-gates", "low quality and topSimilarity SHALL use qualityScore only: L0 "
         "hints change neither"),
    Rule("retry-path", "quality-gates", "the category-filter retry runs exactly when the filtered result "
         "is low quality, and only when a category filter was used"),
    Rule("retry-evidence", "quality-gates", "a lookup's evidence is the post-processed result it reports: "
         "the filtered one, the unfiltered one, or the retry merged with or replacing the filtered one"),
    # -- R6: dense baseline --------------------------------------------------------------------------
    Rule("dense-only", "dense-baseline", "mode dense SHALL call dense ANN only: no hybrid, keyword, sparse "
         "or scalar (query) reads of the data"),
    # -- R7: optional dense distance -----------------------------------------------------------------
    Rule("dense-distance-label", "dense-distance-gates", "a hybrid hit or block with denseDistance SHALL "
         "still canonicalize to hybrid"),
    Rule("dense-distance-value", "dense-distance-gates", "an attached denseDistance is the hit's dense L2 "
         "distance"),
)  # fmt: skip

RULES = MappingProxyType({rule.id: rule for rule in _ALL})
"""Every rule by id."""


@dataclass(frozen=True)
class Violation:
    """One broken rule: where, what the spec allows, and what the implementation answered."""

    rule: Rule
    item: str
    expected: str
    actual: str

    @property
    def requirement(self) -> str:
        return self.rule.requirement

    def fail(self) -> SpecViolationError:
        """This violation as the error a Then step raises."""
        return SpecViolationError("reply", [self])

    def __str__(self) -> str:
        return (
            f"[{self.rule.requirement}: {self.rule.id}] {self.item}: expected {self.expected}; "
            f"got {self.actual}. Rule: {self.rule.says}"
        )


def violation(rule_id: str, item: str, expected: str, actual: str) -> Violation:
    """A violation of the rule ``rule_id`` (a typo in the id is the kit's bug and raises KeyError)."""
    return Violation(RULES[rule_id], item, expected, actual)


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
        headline = f"{operation} reply: [{first.rule.requirement}: {first.rule.id}] {first.item}: expected "
        headline += f"{first.expected}; got {first.actual}"
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

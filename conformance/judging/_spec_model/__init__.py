"""An executable model of the spec: given a request and a reply, does the spec allow the reply?

The judge's single source of truth. It never imports the reference (an oracle sharing the judged
implementation's code would share its bugs) and never asks the implementation what is right. Each check
returns :class:`Violation` values naming the rule, its requirement, the offending item, and expected
against actual. Rules the spec's words back fail a reply (:func:`failing`); the others are notes, only
reported (:func:`noted`). A list without failing findings means the reply is one the spec allows. Every
freedom the spec leaves is accepted (see ``features/spec/readings.md``).

Modules: ``_rules`` (the rules as data, with the sentence each enforces), ``_labels`` (the kit's
label table, its one home), ``_numbers`` (the spec's
arithmetic and the kit's tolerances), ``_single`` (one label, one qualityScore), ``_qualities`` (the
qualities of a batch), ``_postprocess`` (a post-process reply), ``_search`` (a search reply),
``_dense_only`` (the engine calls of dense mode), ``_lookup`` (a lookup reply, its retry).
"""

from ._dense_only import DATA_READS, check_dense_only
from ._labels import LABELS, SPELLINGS, canonical
from ._lookup import Attempt, LookupTruth, check_lookup, low_quality_readings
from ._numbers import DISTANCE_TOLERANCE, QUALITY_TOLERANCE, close, dense_quality
from ._postprocess import (
    DROP_REASONS,
    Normalizer,
    check_post_process,
    gate_violations,
    kept_candidates,
    kept_ranks,
    top_readings,
)
from ._qualities import batch_sizes
from ._rules import (
    REQUIREMENT_NUMBERS,
    RULES,
    Rule,
    SpecViolationError,
    Violation,
    expect,
    failing,
    noted,
    violation,
)
from ._search import (
    DENSE_TIE,
    FUSED_TIE,
    Expected,
    SearchTruth,
    check_search,
    tie_groups,
    truth_ties,
)
from ._single import check_label, check_quality

__all__ = [
    "DATA_READS",
    "DENSE_TIE",
    "DISTANCE_TOLERANCE",
    "DROP_REASONS",
    "FUSED_TIE",
    "LABELS",
    "QUALITY_TOLERANCE",
    "REQUIREMENT_NUMBERS",
    "RULES",
    "SPELLINGS",
    "Attempt",
    "Expected",
    "LookupTruth",
    "Normalizer",
    "Rule",
    "SearchTruth",
    "SpecViolationError",
    "Violation",
    "batch_sizes",
    "canonical",
    "check_dense_only",
    "check_label",
    "check_lookup",
    "check_post_process",
    "check_quality",
    "check_search",
    "close",
    "dense_quality",
    "expect",
    "failing",
    "gate_violations",
    "kept_candidates",
    "kept_ranks",
    "low_quality_readings",
    "noted",
    "tie_groups",
    "top_readings",
    "truth_ties",
    "violation",
]

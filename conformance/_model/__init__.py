"""An executable model of the spec: given a request and a reply, does the spec allow the reply?

The judge's single source of truth. It never imports the reference (an oracle sharing the judged
implementation's code would share its bugs) and never asks the implementation what is right. Each check
returns :class:`Violation` values naming the rule, its requirement, the offending item, and expected
against actual; an empty list means the reply is one the spec allows. Every freedom the spec leaves is
accepted (see ``features/spec/readings.md``).
"""

from ._lookup import Attempt, LookupTruth, check_lookup, low_quality_readings
from ._numbers import DISTANCE_TOLERANCE, LABELS, QUALITY_TOLERANCE, canonical, close, dense_quality
from ._postprocess import DROP_REASONS, Normalizer, check_post_process, kept_ranks, top_readings
from ._rules import RULES, Rule, SpecViolationError, Violation, expect, violation
from ._search import DATA_READS, Expected, SearchTruth, check_dense_only, check_search, tie_groups
from ._single import check_label, check_quality

__all__ = [
    "DATA_READS",
    "DISTANCE_TOLERANCE",
    "DROP_REASONS",
    "LABELS",
    "QUALITY_TOLERANCE",
    "RULES",
    "Attempt",
    "Expected",
    "LookupTruth",
    "Normalizer",
    "Rule",
    "SearchTruth",
    "SpecViolationError",
    "Violation",
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
    "kept_ranks",
    "low_quality_readings",
    "tie_groups",
    "top_readings",
    "violation",
]

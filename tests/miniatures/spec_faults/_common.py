"""What several faults share: the default post-process config and the legacy L0 boosts."""

from __future__ import annotations

from conformance.boundary._protocol import Hints, PostProcessConfig
from tests.miniatures.from_the_spec import Scored, hint_overlaps

__all__ = ["BOOSTS", "DEFAULTS", "boost"]

DEFAULTS = PostProcessConfig()
# The legacy post-processor's additive L0 boosts (design note, section 2.3).
BOOSTS = {"l0_domain_overlap": 0.15, "l0_entity_overlap": 0.20, "l0_keyword_overlap": 0.10}
BOOSTS["l0_source_type_match"] = 0.05


def boost(s: Scored, hints: Hints) -> float:
    return sum(BOOSTS[reason] for reason in hint_overlaps(s.candidate, hints))

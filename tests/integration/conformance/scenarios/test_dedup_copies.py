"""A dedup that keeps a later copy of a chunk fails rank order (R4), not the normalizer (R3).

DedupKeepsLastCopy keeps the last copy of a chunk at the first copy's place. Under seed 344017094 one
drawn batch holds three copies of A#3: rank 1 and rank 4 with a denseDistance near 0, and rank 4 with
none. The block kept is the distance-less rank-4 copy (a rank-mapped qualityScore); the kit paired it
with the other rank-4 copy, whose distance gives 1.0, and failed the block under R3 one-normalizer too.
Both rank-4 copies are the same block by everything a block shows: the normalizer's answer for either
will do, and only R4 is broken.
"""

from __future__ import annotations

from pathlib import Path

from conformance.commands._runner import run_conformance

SAME_GATES = "prop-same-qualityscores-same-gates"


def test_a_later_copy_kept_by_dedup_fails_rank_order_only(tmp_path: Path) -> None:
    outcome = run_conformance(
        "tests.miniatures.spec_faults:DedupKeepsLastCopy",
        report_dir=tmp_path,
        select=SAME_GATES,
        seed=344017094,
        profile="selftest",
    )
    assert outcome.report is not None
    (scenario,) = [s for s in outcome.report.scenarios if s.id == SAME_GATES]
    assert scenario.status == "failed", scenario
    assert set(scenario.broken_requirements) == {"rank-order"}, scenario

"""Faults that only a near-tie of fused scores shows (F38): the hybrid order re-sorted inside a window.

RRF with k=60 puts ranks (3, 1) and (2, 2) about 8e-6 apart, and with a larger RRF k every neighbour is
closer than 1e-4. A fault that re-sorts inside such a window passes every request whose near-ties agree
with the dense order; the kit asks, every run, a hybrid search whose near-ties disagree with it
(``conformance/corpus/_near_ties.py``).
"""

from __future__ import annotations

import math
from itertools import pairwise
from typing import Any

from conformance.boundary._protocol import SearchRequest
from tests.miniatures.spec_freedoms import HybridDenseProbeDistance

__all__ = ["NearTieByDenseDistance"]

_WINDOW = 1e-4  # fused scores closer than this are "the same" to the fault


class NearTieByDenseDistance(HybridDenseProbeDistance):
    """dense-distance-order (R7): "Retrieval order SHALL remain the hybrid/RRF order". Hybrid hits whose
    fused scores differ by less than 1e-4 from the previous hit's are one group; each group is re-sorted
    by the attached ``denseDistance`` (hits without one last) and ``originalRank`` renumbered 1..n.
    Exact ties are re-sorted too, which the spec allows (R4's "stable tie-break"): only near-ties show it.
    """

    def engine_search(self, request: SearchRequest) -> list[Any]:
        hits = super().engine_search(request)
        if request.mode != "hybrid" or not hits:
            return hits
        groups: list[list[Any]] = [[hits[0]]]
        for previous, hit in pairwise(hits):
            close = previous.score is not None and hit.score is not None
            if close and abs(previous.score - hit.score) < _WINDOW:
                groups[-1].append(hit)
            else:
                groups.append([hit])
        resorted = [
            h
            for group in groups
            for h in sorted(group, key=lambda h: math.inf if h.dense_distance is None else h.dense_distance)
        ]
        return [h.model_copy(update={"original_rank": rank}) for rank, h in enumerate(resorted, start=1)]

"""The judge files a transport's notes (a stdio reply's fields beside ``result``) under the scenario
that asked, each once; an adapter without ``take_notes`` (in process) changes nothing."""

from __future__ import annotations

from conformance.boundary._protocol import BASE_CAPABILITIES, ImplementationInfo, QualityRequest
from conformance.judging._judge import Judge

_INFO = ImplementationInfo(name="mini", version="1", capabilities=BASE_CAPABILITIES)


class _Talking:
    """Answers labels and the dense formula; its transport has one note per call."""

    def __init__(self) -> None:
        self.pending: list[str] = []

    def canonicalize_label(self, label: str) -> str:
        self.pending.append("canonicalize_label reply carried fields beside its result: elapsedMs")
        return {"rrf_fused": "hybrid", "l2_distance": "dense"}.get(label, label)

    def quality_score(self, request: QualityRequest) -> float:
        self.pending.append("quality_score reply carried fields beside its result: elapsedMs")
        return max(0.0, 1.0 - min(request.score or 0.0, request.max_l2_distance) / request.max_l2_distance)

    def take_notes(self) -> list[str]:
        notes, self.pending = self.pending, []
        return notes


def test_transport_notes_become_the_scenarios_notes_once() -> None:
    notes: list[str] = []
    judge = Judge(_Talking(), _INFO, notes=notes)  # type: ignore[arg-type]  # a duck, as adapters are
    judge.canonicalize_label("rrf_fused")
    judge.canonicalize_label("rrf_fused")
    judge.quality_score(QualityRequest(score_label="dense", score=0.5))
    assert notes == [
        "canonicalize_label reply carried fields beside its result: elapsedMs",
        "quality_score reply carried fields beside its result: elapsedMs",
    ]


def test_an_adapter_without_take_notes_adds_none() -> None:
    class Plain:
        def canonicalize_label(self, label: str) -> str:
            return "hybrid"

    notes: list[str] = []
    Judge(Plain(), _INFO, notes=notes).canonicalize_label("rrf_fused")  # type: ignore[arg-type]
    assert notes == []

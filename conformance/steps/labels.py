"""Steps about score labels: the kit's own canonical table and the legacy-alias scenarios.

The table is the kit's, written from the spec and the design note (section 5.1), never taken from an
implementation: a judge that reused the judged code's table would pass its mistakes.
"""

from __future__ import annotations

from pytest_bdd import parsers, then, when

from .._calls import ask
from .._errors import AdapterCallError, ConformanceError
from .._protocol import Implementation, QualityRequest

__all__ = ["KIT_CANONICAL_LABELS", "kit_canonical"]

KIT_CANONICAL_LABELS: dict[str, str] = {
    "dense": "dense",
    "hybrid": "hybrid",
    "l2_distance": "dense",
    "rrf_fused": "hybrid",
    "bm25_only_no_dense": "hybrid",
}

# Normalizer inputs on which the dense formula and any rank mapping disagree for usual mappings
# (dense: 0.35 / 0.9 / 0.0; linear rank: 0.5 / 0.8 / 0.25), so an alias read as the wrong label shows.
# Each probe: (score, originalRank, batch size), with maxL2Distance 2 and no denseDistance.
_QUALITY_PROBES: tuple[tuple[float, int, int], ...] = ((1.3, 3, 4), (0.2, 2, 5), (2.5, 4, 4))


def kit_canonical(label: str) -> str | None:
    """``dense`` or ``hybrid`` for a canonical label or one of the three legacy aliases, else ``None``."""
    return KIT_CANONICAL_LABELS.get(label)


@when(parsers.parse('a candidate carries the legacy label "{legacy}"'), target_fixture="legacy_label")
def _(legacy: str) -> str:
    if kit_canonical(legacy) is None or legacy == kit_canonical(legacy):
        raise ConformanceError(f"kit bug: the feature names {legacy!r}, not one of the spec's legacy aliases")
    return legacy


@then(parsers.parse('the label canonicalizes to "{canonical}"'))
def _(rqs_implementation: Implementation, legacy_label: str, canonical: str) -> None:
    try:
        answer = ask(rqs_implementation, "canonicalize_label", legacy_label, expect=str)
    except AdapterCallError as exc:
        raise AssertionError(
            f"the spec requires the legacy label {legacy_label!r} to canonicalize to {canonical!r}; "
            f"the implementation raised {type(exc.cause).__name__}: {exc.cause}"
        ) from None
    assert answer == canonical, (
        f"the spec requires the legacy label {legacy_label!r} to canonicalize to {canonical!r}; "
        f"the implementation answered {answer!r}"
    )


@then(parsers.parse('quality normalization gives it the same qualityScore as the label "{canonical}"'))
def _(rqs_implementation: Implementation, legacy_label: str, canonical: str) -> None:
    for score, rank, batch in _QUALITY_PROBES:
        probe = QualityRequest(score_label=canonical, score=score, original_rank=rank, batch_size=batch)
        expected = ask(rqs_implementation, "quality_score", probe, expect=float)
        request = probe.model_copy(update={"score_label": legacy_label})
        try:
            answer = ask(rqs_implementation, "quality_score", request, expect=float)
        except AdapterCallError as exc:
            raise AssertionError(
                f"the spec requires quality normalization to canonicalize {legacy_label!r} to "
                f"{canonical!r} before computing quality; for {_show(request)} the implementation raised "
                f"{type(exc.cause).__name__}: {exc.cause}"
            ) from None
        assert abs(answer - expected) <= 1e-9, (
            f"the spec requires quality normalization to canonicalize {legacy_label!r} to {canonical!r} "
            f"before computing quality; for {_show(request)} the implementation gave {answer!r}, but "
            f"{expected!r} for the label {canonical!r}"
        )


def _show(request: QualityRequest) -> str:
    return ", ".join(f"{k}={v}" for k, v in request.model_dump(by_alias=True, exclude_none=True).items())

"""Steps about score labels: the kit's own canonical table and the legacy-alias scenarios.

The table is the kit's, written from the spec and the design note (section 5.1), never taken from an
implementation: a judge that reused the judged code's table would pass its mistakes.
"""

from __future__ import annotations

from pytest_bdd import parsers, then, when

from .._errors import AdapterCallError, ConformanceError
from .._judge import Judge
from .._model import close
from .._protocol import QualityRequest

__all__ = ["KIT_CANONICAL_LABELS", "kit_canonical"]

KIT_CANONICAL_LABELS: dict[str, str] = {
    "dense": "dense",
    "hybrid": "hybrid",
    "l2_distance": "dense",
    "rrf_fused": "hybrid",
    "bm25_only_no_dense": "hybrid",
}

# Normalizer inputs on which the dense formula and usual rank mappings disagree, so an alias read as the
# wrong label shows; with the configurations and distances an implementation might special-case (another
# maxL2Distance, a denseDistance attached, a null score): (score, originalRank, batch size, maxL2, dd).
_PROBES: tuple[tuple[float | None, int, int, float, float | None], ...] = (
    (1.3, 3, 4, 2.0, None),
    (0.2, 2, 5, 2.0, None),
    (2.5, 4, 4, 2.0, None),
    (1.3, 3, 4, 4.0, None),
    (0.45, 2, 3, 0.6, None),
    (None, 2, 3, 2.0, None),
    (0.0312, 3, 4, 2.0, 0.8),
    (0.0327, 1, 4, 4.0, 1.4),
    (0.0317, 2, 2, 0.6, 0.3),
)


def _probes(canonical: str) -> list[QualityRequest]:
    """The probes for ``canonical``'s label (a dense hit may carry denseDistance too: dense ignores it)."""
    return [
        QualityRequest(
            score_label=canonical,
            score=score,
            original_rank=rank,
            batch_size=batch,
            max_l2_distance=max_l2,
            dense_distance=distance,
        )
        for score, rank, batch, max_l2, distance in _PROBES
    ]


def kit_canonical(label: str) -> str | None:
    """``dense`` or ``hybrid`` for a canonical label or one of the three legacy aliases, else ``None``."""
    return KIT_CANONICAL_LABELS.get(label)


@when(parsers.parse('a candidate carries the legacy label "{legacy}"'), target_fixture="legacy_label")
def _(legacy: str) -> str:
    if kit_canonical(legacy) is None or legacy == kit_canonical(legacy):
        raise ConformanceError(f"kit bug: the feature names {legacy!r}, not one of the spec's legacy aliases")
    return legacy


@then(parsers.parse('the label canonicalizes to "{canonical}"'))
def _(rqs_judge: Judge, legacy_label: str, canonical: str) -> None:
    try:
        answer = rqs_judge.canonicalize_label(legacy_label)
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
def _(rqs_judge: Judge, legacy_label: str, canonical: str) -> None:
    for probe in _probes(canonical):
        expected = rqs_judge.quality_score(probe)
        request = probe.model_copy(update={"score_label": legacy_label})
        try:
            answer = rqs_judge.quality_score(request)
        except AdapterCallError as exc:
            raise AssertionError(
                f"the spec requires quality normalization to canonicalize {legacy_label!r} to "
                f"{canonical!r} before computing quality; for {_show(request)} the implementation raised "
                f"{type(exc.cause).__name__}: {exc.cause}"
            ) from None
        assert close(answer, expected), (
            f"the spec requires quality normalization to canonicalize {legacy_label!r} to {canonical!r} "
            f"before computing quality; for {_show(request)} the implementation gave {answer!r}, but "
            f"{expected!r} for the label {canonical!r}"
        )


def _show(request: QualityRequest) -> str:
    return ", ".join(f"{k}={v}" for k, v in request.model_dump(by_alias=True, exclude_none=True).items())

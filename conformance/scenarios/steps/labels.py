"""Steps about score labels: the legacy-alias scenarios, read with the kit's own label table (its one
home is :mod:`conformance.judging._spec_model._labels`)."""

from __future__ import annotations

from pytest_bdd import parsers, then, when

from ...boundary._errors import AdapterCallError, ConformanceError
from ...boundary._protocol import (
    PostProcessConfig,
    PostProcessReply,
    PostProcessRequest,
    QualityRequest,
    WireCandidate,
)
from ...judging._judge import Judge
from ...judging._spec_model import canonical as canonical_label
from ...judging._spec_model import close, expect, violation

__all__: list[str] = []


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


@when(parsers.parse('a candidate carries the legacy label "{legacy}"'), target_fixture="legacy_label")
def _(legacy: str) -> str:
    if canonical_label(legacy) is None or legacy == canonical_label(legacy):
        raise ConformanceError(f"kit bug: the feature names {legacy!r}, not one of the spec's legacy aliases")
    return legacy


@when(parsers.parse('a candidate carries the canonical label "{label}"'), target_fixture="legacy_label")
def _(label: str) -> str:
    # The same fixture as a legacy label's: canonicalization must map each of the five spellings, the
    # canonical ones included ("`dense` or `hybrid` (after any legacy alias canonicalization)").
    if canonical_label(label) != label:
        raise ConformanceError(f"kit bug: the feature names {label!r}, not one of the canonical labels")
    return label


@then(parsers.parse('the label canonicalizes to "{canonical}"'))
def _(rqs_judge: Judge, legacy_label: str, canonical: str) -> None:
    item = f"canonicalize_label({legacy_label!r})"
    try:
        answer = rqs_judge.canonicalize_label(legacy_label)
    except AdapterCallError as exc:
        cause = exc.what_happened()
        raise violation("canonical-label", item, repr(canonical), cause).fail() from None
    expect(answer == canonical, "canonical-label", item, repr(canonical), repr(answer))


@then(parsers.parse('quality normalization gives it the same qualityScore as the label "{canonical}"'))
def _(rqs_judge: Judge, legacy_label: str, canonical: str) -> None:
    for probe in _probes(canonical):
        expected = rqs_judge.quality_score(probe)
        request = probe.model_copy(update={"score_label": legacy_label})
        item = f"qualityScore for {_show(request)}"
        try:
            answer = rqs_judge.quality_score(request)
        except AdapterCallError as exc:
            cause = exc.what_happened()
            raise violation("alias-quality", item, f"{expected!r}", cause).fail() from None
        expect(
            close(answer, expected), "alias-quality", item, f"{expected!r} (as {canonical!r})", repr(answer)
        )


@when(
    parsers.parse('post-process handles candidates carrying the legacy label "{legacy}"'),
    target_fixture="alias_evidence",
)
def _(rqs_judge: Judge, legacy: str) -> tuple[str, PostProcessReply, PostProcessReply]:
    canonical = canonical_label(legacy)
    if canonical is None or legacy == canonical:
        raise ConformanceError(f"kit bug: the feature names {legacy!r}, not one of the spec's legacy aliases")
    batch = _alias_batch(legacy)
    with_alias = rqs_judge.post_process(PostProcessRequest(candidates=batch, config=_ALIAS_CONFIG))
    plain = tuple(c.model_copy(update={"score_label": canonical}) for c in batch)
    with_canonical = rqs_judge.post_process(PostProcessRequest(candidates=plain, config=_ALIAS_CONFIG))
    return canonical, with_alias, with_canonical


@then(
    parsers.parse('their evidence blocks carry the label "{canonical}" and the qualityScores of that label')
)
def _(alias_evidence: tuple[str, PostProcessReply, PostProcessReply], canonical: str) -> None:
    _, with_alias, with_canonical = alias_evidence
    labels = [b.score_label for b in with_alias.blocks]
    expect(
        all(label == canonical for label in labels),
        "emitted-alias",
        "evidence blocks of legacy-labelled candidates",
        f"every block labelled {canonical!r}",
        repr(labels),
    )
    got = [b.quality_score for b in with_alias.blocks]
    want = [b.quality_score for b in with_canonical.blocks]
    expect(
        len(got) == len(want) and all(close(a, b) for a, b in zip(got, want, strict=False)),
        "alias-quality",
        "evidence blocks of legacy-labelled candidates",
        f"the qualityScores of the label {canonical!r}: {want}",
        repr(got),
    )


_ALIAS_CONFIG = PostProcessConfig(max_l2_distance=4.0, return_n=3)


def _alias_batch(label: str) -> tuple[WireCandidate, ...]:
    """Three candidates of two documents; hybrid ones with fused scores, one with a denseDistance."""
    dense = canonical_label(label) == "dense"
    scores = (0.4, 1.1, 2.3) if dense else (0.0325, 0.0318, 0.0311)
    distances = (None, None, None) if dense else (None, 1.4, None)
    return tuple(
        WireCandidate(
            doc_id=doc,
            chunk_index=i,
            text=f"alias probe {i}",
            original_rank=i + 1,
            score=score,
            score_label=label,
            dense_distance=distance,
        )
        for i, (doc, score, distance) in enumerate(zip(("a", "b", "a"), scores, distances, strict=True))
    )


def _show(request: QualityRequest) -> str:
    return ", ".join(f"{k}={v}" for k, v in request.model_dump(by_alias=True, exclude_none=True).items())

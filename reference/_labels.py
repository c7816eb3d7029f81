"""The only place that interprets a ``scoreLabel``."""

from __future__ import annotations

from typing import Literal

from ._errors import UnknownScoreLabelError

__all__ = ["CANONICAL_LABELS", "LEGACY_ALIASES", "CanonicalLabel", "canonicalize_label"]

CanonicalLabel = Literal["dense", "hybrid"]
CANONICAL_LABELS: tuple[CanonicalLabel, ...] = ("dense", "hybrid")

# Labels the legacy pipeline emitted (see the design note, section 2.2). They are read, never emitted.
LEGACY_ALIASES: dict[str, CanonicalLabel] = {
    "l2_distance": "dense",
    "rrf_fused": "hybrid",
    "bm25_only_no_dense": "hybrid",
}


def canonicalize_label(label: str) -> CanonicalLabel:
    """Map a score label to ``dense`` or ``hybrid``.

    Canonical labels map to themselves and the three legacy aliases to their canonical label. Anything
    else, other spellings and case variants included, raises :class:`UnknownScoreLabelError`: the spec
    names exactly these labels, and guessing would hide a broken emitter.
    """
    if label in CANONICAL_LABELS:
        return label  # type: ignore[return-value]
    try:
        return LEGACY_ALIASES[label]
    except (KeyError, TypeError):
        raise UnknownScoreLabelError(label, (*CANONICAL_LABELS, *LEGACY_ALIASES)) from None

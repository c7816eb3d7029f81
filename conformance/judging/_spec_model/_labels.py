"""The kit's own label table, written from the spec and the design note (section 5.1): the one home of it.

Never taken from an implementation: a judge that reused the judged code's table would pass its
mistakes. Exactly these spellings (readings 8): the canonical labels and the three legacy aliases.
"""

from __future__ import annotations

__all__ = ["LABELS", "SPELLINGS", "canonical"]

LABELS: dict[str, str] = {
    "dense": "dense",
    "hybrid": "hybrid",
    "l2_distance": "dense",
    "rrf_fused": "hybrid",
    "bm25_only_no_dense": "hybrid",
}
"""Each label the spec names, and its canonical label."""

SPELLINGS: dict[str, tuple[str, ...]] = {
    kind: tuple(label for label, canonical_label in LABELS.items() if canonical_label == kind)
    for kind in ("dense", "hybrid")
}
"""Each canonical label with every spelling that canonicalizes to it (itself first): the table read the
other way, for generating labels."""


def canonical(label: str) -> str | None:
    """``dense`` or ``hybrid`` for a canonical label or one of the three legacy aliases, else None."""
    return LABELS.get(label)

"""Ranking metrics and binary-classifier scores, as small pure functions.

Ranking metrics take a ranking (evidence keys, best first) and graded labels (key -> grade >= 1; a key
without a label is irrelevant). Definitions:

- ``recall@k``: labelled chunks found in the first ``k`` over all labelled chunks.
- reciprocal rank: ``1 / r`` for the first labelled chunk at rank ``r``, 0 when none is ranked.
- ``nDCG@k``: DCG of the first ``k`` with gain ``2**grade - 1`` and discount ``log2(rank + 1)``, over
  the DCG of the ideal order of the labels (the best possible ranking, so 1.0 means perfect).

The classifier view of a quality gate: the positive class is "flagged" (the gate said low quality),
and precision, recall and F1 are those of flagging the queries that truly have no answer.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from decimal import Decimal

from .._models import _Model

__all__ = [
    "BinaryScores",
    "binary_scores",
    "ndcg_at_k",
    "recall_at_k",
    "reciprocal_rank",
    "threshold_grid",
]


def _check_k(k: int) -> None:
    if isinstance(k, bool) or not isinstance(k, int) or k < 1:
        raise ValueError(f"k is {k!r}; a cut-off is a whole number of at least 1")


def recall_at_k(ranking: Sequence[str], relevant: Mapping[str, int], k: int) -> float:
    """Share of the labelled chunks that appear in the first ``k`` of ``ranking``."""
    _check_k(k)
    if not relevant:
        raise ValueError("recall is undefined for a query with no relevant chunk")
    found = {key for key in ranking[:k] if key in relevant}
    return len(found) / len(relevant)


def reciprocal_rank(ranking: Sequence[str], relevant: Mapping[str, int]) -> float:
    """``1 / rank`` of the first labelled chunk in ``ranking``; 0.0 when none is there."""
    for rank, key in enumerate(ranking, start=1):
        if key in relevant:
            return 1.0 / rank
    return 0.0


def _dcg(grades: Sequence[int]) -> float:
    return sum((2.0**grade - 1.0) / math.log2(rank + 1) for rank, grade in enumerate(grades, start=1))


def ndcg_at_k(ranking: Sequence[str], relevant: Mapping[str, int], k: int) -> float:
    """Normalised discounted cumulative gain of the first ``k`` (a key counts once, at its first rank)."""
    _check_k(k)
    if not relevant:
        raise ValueError("nDCG is undefined for a query with no relevant chunk")
    seen: set[str] = set()
    gains = []
    for key in ranking[:k]:
        gains.append(relevant.get(key, 0) if key not in seen else 0)
        seen.add(key)
    ideal = _dcg(sorted(relevant.values(), reverse=True)[:k])
    return _dcg(gains) / ideal


class BinaryScores(_Model):
    """Confusion counts and the scores derived from them; a score with a zero denominator is None."""

    tp: int
    fp: int
    fn: int
    tn: int
    precision: float | None
    recall: float | None
    f1: float | None
    false_positive_rate: float | None
    youden_j: float | None


def _ratio(num: int, den: int) -> float | None:
    return num / den if den else None


def binary_scores(predicted: Sequence[bool], actual: Sequence[bool]) -> BinaryScores:
    """Scores of ``predicted`` (flagged) against ``actual`` (truly positive), pairwise.

    ``f1`` is ``2 tp / (2 tp + fp + fn)``, defined whenever anything is positive or flagged.
    ``youden_j`` is recall + specificity - 1 (in [-1, 1]; 0 is a coin toss), defined when both classes
    are present: unlike F1 it does not move with the share of positives in the set.
    """
    if len(predicted) != len(actual):
        raise ValueError(f"{len(predicted)} predictions for {len(actual)} labels; they must pair up")
    tp = sum(1 for p, a in zip(predicted, actual, strict=True) if p and a)
    fp = sum(1 for p, a in zip(predicted, actual, strict=True) if p and not a)
    fn = sum(1 for p, a in zip(predicted, actual, strict=True) if not p and a)
    tn = len(actual) - tp - fp - fn
    recall, fpr = _ratio(tp, tp + fn), _ratio(fp, fp + tn)
    return BinaryScores(
        tp=tp,
        fp=fp,
        fn=fn,
        tn=tn,
        precision=_ratio(tp, tp + fp),
        recall=recall,
        f1=_ratio(2 * tp, 2 * tp + fp + fn),
        false_positive_rate=fpr,
        youden_j=None if recall is None or fpr is None else recall - fpr,
    )


def threshold_grid(step: float = 0.01) -> tuple[float, ...]:
    """Thresholds from 0 to 1 inclusive, rounded to the step's decimals (so they read as settings)."""
    if not 0 < step <= 1:
        raise ValueError(f"step is {step}; use a number in (0, 1]")
    count = round(1 / step)
    exponent = Decimal(str(step)).normalize().as_tuple().exponent
    decimals = max(0, -exponent) if isinstance(exponent, int) else 0
    return tuple(round(i * step, decimals) for i in range(count + 1))

"""Ranking metrics from trec_eval's implementation, and the quality gate as a binary classifier.

Ranking metrics are computed by ``ir_measures`` through its ``pytrec_eval`` provider, trec_eval's own
code, so every figure is the one ``trec_eval`` prints for the exported run and qrels. Each one carries
its standard name (ir_measures' name, trec_eval's measure in brackets):

- ``R@k`` (``recall_k``): labelled chunks in the first ``k`` over all labelled chunks of the query;
- ``RR`` (``recip_rank``): ``1 / r`` for the first labelled chunk at rank ``r``, 0 when none is ranked;
  its mean over queries is the MRR;
- ``nDCG@k`` (``ndcg_cut_k``): DCG of the first ``k`` over the DCG of the ideal order of all labelled
  chunks, with discount ``log2(rank + 1)`` and **the grade as the gain** (trec_eval's convention; some
  papers use ``2^grade - 1``, which weighs a grade-2 chunk three times a grade-1 one instead of twice).

A ranking is a sequence of evidence keys, best first; a key counts once, at its first rank. It reaches
trec_eval as a run whose scores count down from its length to 1, so trec_eval's order (by score, ties
by docid) is exactly the ranking's order. A labelled query without a ranking scores 0, as
``trec_eval -c`` counts it.

The classifier view of a quality gate: the positive class is "flagged" (the gate said low quality),
and precision, recall and F1 are those of flagging the queries that truly have no answer. No IR tool
scores that, so it is counted here.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from decimal import Decimal

from pydantic import BaseModel, ConfigDict
from pydantic.alias_generators import to_camel

from ._errors import EvaluationError

__all__ = [
    "GAIN_CONVENTION",
    "BinaryScores",
    "binary_scores",
    "measure_names",
    "per_query",
    "run_scores",
    "threshold_grid",
]

GAIN_CONVENTION = "nDCG's gain is the grade, as in trec_eval (not 2^grade - 1); discount log2(rank + 1)"


def measure_names(ks: Iterable[int]) -> tuple[str, ...]:
    """The ranking measures of a report at cut-offs ``ks``: ``R@k`` and ``nDCG@k`` per ``k``, then ``RR``."""
    names: list[str] = []
    for k in ks:
        if isinstance(k, bool) or not isinstance(k, int) or k < 1:
            raise EvaluationError(f"cut-off is {k!r}; a cut-off is a whole number of at least 1")
        names += [f"R@{k}", f"nDCG@{k}"]
    return (*names, "RR")


def run_scores(ranking: Sequence[str]) -> dict[str, float]:
    """``ranking`` as one query of a TREC run: key -> score, from ``len`` down to 1, first rank kept."""
    keys = list(dict.fromkeys(ranking))
    return {key: float(len(keys) - i) for i, key in enumerate(keys)}


def per_query(
    names: Sequence[str],
    rankings: Mapping[str, Sequence[str]],
    qrels: Mapping[str, Mapping[str, int]],
) -> dict[str, dict[str, float]]:
    """Every measure in ``names`` for every query of ``qrels`` (query id -> key -> grade >= 1).

    ``rankings`` maps query ids to evidence keys, best first; queries it lacks score 0. Queries of
    ``rankings`` without labels are not measured (nothing can be found for them).
    """
    import ir_measures

    provider = ir_measures.pytrec_eval
    if not provider.is_available():
        raise EvaluationError(
            "trec_eval's implementation is not importable; reinstall the kit "
            "(pip install rag-quality-conformance pulls in ir-measures and pytrec-eval-terrier)"
        )
    measures = {ir_measures.parse_measure(name): name for name in names}
    out = {qid: dict.fromkeys(names, 0.0) for qid in qrels}
    if not qrels:
        return out
    run = {qid: run_scores(rankings.get(qid, ())) for qid in qrels}
    for metric in provider.iter_calc(list(measures), {q: dict(g) for q, g in qrels.items()}, run):
        out[metric.query_id][measures[metric.measure]] = float(metric.value)
    return out


class _Model(BaseModel):
    # The reports speak camelCase, as the reference's values do.
    model_config = ConfigDict(
        alias_generator=to_camel, populate_by_name=True, serialize_by_alias=True, frozen=True, extra="forbid"
    )


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

"""The two verbs: :func:`evaluate` one run against the labels, :func:`compare` two runs query by query.

A run is rankings (query id -> ids, best first); qrels are the labels (query id -> id -> grade >= 1).
Both verbs return values (:class:`Evaluation`, :class:`Comparison`) that keep every per-query figure,
so a report can show means, tests and the queries that moved from one value.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from statistics import fmean

from pydantic import BaseModel, ConfigDict

from ._metrics import per_query
from ._stats import Alternative, PairedTest, paired_test

__all__ = ["Comparison", "Evaluation", "compare", "evaluate"]


class Evaluation(BaseModel):
    """Every measure of one run for every labelled query: ``per_query[measure][query id]``."""

    model_config = ConfigDict(frozen=True)

    measures: tuple[str, ...]
    query_ids: tuple[str, ...]
    per_query: dict[str, dict[str, float]]

    def mean(self, measure: str) -> float | None:
        """The mean over the labelled queries; None when there is none."""
        values = self.per_query[measure]
        return fmean(values.values()) if values else None


class Comparison(BaseModel):
    """Two runs over the same labelled queries, and each measure's paired test (new - old)."""

    model_config = ConfigDict(frozen=True)

    old: Evaluation
    new: Evaluation
    tests: dict[str, PairedTest]


def evaluate(
    qrels: Mapping[str, Mapping[str, int]], rankings: Mapping[str, Sequence[str]], measures: Sequence[str]
) -> Evaluation:
    """Every measure (ir_measures' names) of ``rankings`` for every query of ``qrels``, in its order.

    A labelled query the run lacks scores 0, as ``trec_eval -c`` counts it.
    """
    scored = per_query(measures, rankings, qrels)
    ids = tuple(qrels)
    return Evaluation(
        measures=tuple(measures),
        query_ids=ids,
        per_query={m: {q: scored[q][m] for q in ids} for m in measures},
    )


def compare(
    qrels: Mapping[str, Mapping[str, int]],
    old: Mapping[str, Sequence[str]],
    new: Mapping[str, Sequence[str]],
    measures: Sequence[str],
    *,
    seed: int = 0,
    alternative: Alternative = "two-sided",
) -> Comparison:
    """Evaluate both runs on ``qrels`` and test each measure paired over its queries (in qrels' order);
    ``alternative="less"`` asks only whether ``new`` is worse (every measure here: higher is better)."""
    a, b = evaluate(qrels, old, measures), evaluate(qrels, new, measures)
    tests = {
        m: paired_test(
            [a.per_query[m][q] for q in a.query_ids],
            [b.per_query[m][q] for q in b.query_ids],
            seed=seed,
            alternative=alternative,
        )
        for m in measures
    }
    return Comparison(old=a, new=b, tests=tests)

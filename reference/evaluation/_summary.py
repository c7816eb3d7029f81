"""The tables of an evaluation report, computed from an :class:`reference.EvalRun` alone.

- ranking quality per mode, over all answerable queries and per kind of query;
- the category retry: how often it ran, and whether the evidence got better (trec_eval's nDCG at
  ``rag.return-n`` over the accepted blocks of the filtered attempt against those of the retry);
- the low-quality gate as a classifier of "this query has no answer in the corpus";
- relevance levels per class, the label check, and the answerable queries whose evidence missed.
"""

from __future__ import annotations

from collections import Counter
from statistics import fmean

from evaluation import KINDS, BinaryScores, binary_scores, per_query

from .._models import RelevanceLevel, _Model
from ._run import EvalRun, QueryOutcome, SearchMode

__all__ = ["EvalSummary", "GateRow", "LabelCheckRow", "RankingRow", "RetryRow", "summarize"]


class RankingRow(_Model):
    """Mean ranking metrics of one mode over a group of answerable queries (``group`` all or a kind)."""

    mode: SearchMode
    group: str
    queries: int
    metrics: dict[str, float]


class RetryRow(_Model):
    """What the category low-quality retry did in one mode."""

    mode: SearchMode
    with_category: int
    retried: int
    retried_unanswerable: int
    retried_answerable: int
    helped: int
    same: int
    hurt: int
    answer_elsewhere: int
    answer_elsewhere_retried: int
    missed: int


class GateRow(_Model):
    """``isLowQuality`` at the run's thresholds, scored as a detector of unanswerable queries."""

    mode: SearchMode
    threshold: float
    answerable: int
    unanswerable: int
    scores: BinaryScores


class LabelCheckRow(_Model):
    """Which leg finds the best-graded chunks of one kind of query within the check depth."""

    kind: str
    queries: int
    dense_only: int
    bm25_only: int
    both: int
    neither: int
    as_labelled: int | None
    exceptions: tuple[str, ...]


class EvalSummary(_Model):
    """Every table of the evaluation report."""

    ranking: tuple[RankingRow, ...]
    retry: tuple[RetryRow, ...]
    gates: tuple[GateRow, ...]
    levels: dict[SearchMode, dict[str, dict[str, int]]]
    label_check: tuple[LabelCheckRow, ...]
    misses: dict[SearchMode, tuple[str, ...]]


def summarize(run: EvalRun) -> EvalSummary:
    """All report tables for ``run``."""
    answerable = [o for o in run.outcomes if o.answerable]
    ranking = []
    for mode in run.modes:
        groups = [("all", answerable)] + [
            (kind, [o for o in answerable if o.kind == kind]) for kind in KINDS if kind != "unanswerable"
        ]
        for group, members in groups:
            if members:
                ranking.append(_ranking_row(mode, group, members))
    return EvalSummary(
        ranking=tuple(ranking),
        retry=tuple(_retry_row(run, mode) for mode in run.modes),
        gates=tuple(_gate_row(run, mode) for mode in run.modes),
        levels={mode: _levels(run, mode) for mode in run.modes},
        label_check=_label_rows(run),
        misses={mode: _misses(run, mode) for mode in run.modes},
    )


def _ranking_row(mode: SearchMode, group: str, members: list[QueryOutcome]) -> RankingRow:
    names = list(members[0].modes[mode].metrics)
    means = {name: fmean(o.modes[mode].metrics[name] for o in members) for name in names}
    return RankingRow(mode=mode, group=group, queries=len(members), metrics=means)


def _retry_row(run: EvalRun, mode: SearchMode) -> RetryRow:
    k = int(run.settings["rag.return-n"])
    with_category = [o for o in run.outcomes if o.category is not None]
    retried = [o for o in with_category if o.modes[mode].retried]
    qrels = {o.id: o.relevant for o in retried if o.answerable}
    name = f"nDCG@{k}"
    before = per_query([name], {o.id: _keys(o, mode, filtered=True) for o in retried}, qrels)
    after = per_query([name], {o.id: _keys(o, mode) for o in retried}, qrels)
    verdicts: Counter[str] = Counter()
    for qid in qrels:
        delta = after[qid][name] - before[qid][name]
        verdicts["helped" if delta > 1e-12 else "hurt" if delta < -1e-12 else "same"] += 1
    elsewhere = [o for o in with_category if o.answer_in_category is False]
    missed = [o for o in elsewhere if not o.modes[mode].retried and not set(o.relevant) & set(_keys(o, mode))]
    return RetryRow(
        mode=mode,
        with_category=len(with_category),
        retried=len(retried),
        retried_unanswerable=sum(1 for o in retried if not o.answerable),
        retried_answerable=sum(1 for o in retried if o.answerable),
        helped=verdicts["helped"],
        same=verdicts["same"],
        hurt=verdicts["hurt"],
        answer_elsewhere=len(elsewhere),
        answer_elsewhere_retried=sum(1 for o in elsewhere if o.modes[mode].retried),
        missed=len(missed),
    )


def _keys(outcome: QueryOutcome, mode: SearchMode, *, filtered: bool = False) -> list[str]:
    result = outcome.modes[mode]
    rows = (result.filtered_evidence or ()) if filtered else result.evidence
    return [row.evidence_key for row in rows]


def _gate_row(run: EvalRun, mode: SearchMode) -> GateRow:
    flagged = [o.modes[mode].is_low_quality for o in run.outcomes]
    truth = [not o.answerable for o in run.outcomes]
    return GateRow(
        mode=mode,
        threshold=float(run.settings["rag.reference-threshold"]),
        answerable=truth.count(False),
        unanswerable=truth.count(True),
        scores=binary_scores(flagged, truth),
    )


def _levels(run: EvalRun, mode: SearchMode) -> dict[str, dict[str, int]]:
    table = {}
    for name, want in (("answerable", True), ("unanswerable", False)):
        counts = Counter(o.modes[mode].relevance_level.value for o in run.outcomes if o.answerable == want)
        table[name] = {level.value: counts[level.value] for level in RelevanceLevel}
    return table


def _label_rows(run: EvalRun) -> tuple[LabelCheckRow, ...]:
    rows = []
    for kind in KINDS:
        checked = [o for o in run.outcomes if o.kind == kind and o.label_check is not None]
        if not checked:
            continue
        tally: Counter[str] = Counter()
        exceptions = []
        for o in checked:
            check = o.label_check
            assert check is not None  # filtered above; narrows the type
            tally[
                {(True, False): "dense_only", (False, True): "bm25_only", (True, True): "both"}.get(
                    (check.dense_finds, check.bm25_finds), "neither"
                )
            ] += 1
            if check.as_labelled(kind) is False:
                exceptions.append(o.id)
        verdicts = [o.label_check.as_labelled(kind) for o in checked if o.label_check is not None]
        rows.append(
            LabelCheckRow(
                kind=kind,
                queries=len(checked),
                dense_only=tally["dense_only"],
                bm25_only=tally["bm25_only"],
                both=tally["both"],
                neither=tally["neither"],
                as_labelled=None if verdicts[0] is None else sum(1 for v in verdicts if v),
                exceptions=tuple(exceptions),
            )
        )
    return tuple(rows)


def _misses(run: EvalRun, mode: SearchMode) -> tuple[str, ...]:
    return tuple(o.id for o in run.outcomes if o.answerable and not set(o.relevant) & set(_keys(o, mode)))

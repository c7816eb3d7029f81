"""run_evaluation on embedded Milvus Lite with a slice of the bundled set, checked for consistency.

The checks recompute what the run recorded from first principles: metrics from the recorded ranks,
the retry decision from the filtered attempt's quality, the top quality from post_process over the
recorded evidence, the summary's counts from the outcomes.
"""

from __future__ import annotations

import io
import sys
from collections.abc import Iterator

import pytest
from pymilvus import MilvusClient

from evaluation import ProgressStep, progress_bar, slice_set
from reference import (
    EvalRun,
    EvalSet,
    EvaluationError,
    HashingEmbedder,
    MilvusKnowledgeStore,
    Settings,
    evaluation_markdown,
    load_eval_set,
    make_embedder,
    post_process,
    run_evaluation,
    summarize,
)

SETTINGS = Settings()


@pytest.fixture(scope="module")
def client(tmp_path_factory: pytest.TempPathFactory) -> Iterator[MilvusClient]:
    c = MilvusClient(str(tmp_path_factory.mktemp("eval") / "eval.db"))
    yield c
    c.close()


@pytest.fixture(scope="module")
def small() -> EvalSet:
    return slice_set(load_eval_set(), 15)


@pytest.fixture(scope="module")
def run(client: MilvusClient, small: EvalSet) -> EvalRun:
    embedder = make_embedder()
    store = MilvusKnowledgeStore(client, collection="evaluation", dim=embedder.dim, settings=SETTINGS)
    calls: list[tuple[int, int]] = []
    ingested: list[tuple[int, int]] = []
    result = run_evaluation(
        small,
        store,
        embedder,
        progress=lambda d, t: calls.append((d, t)),
        ingest_progress=lambda d, t: ingested.append((d, t)),
    )
    assert calls == [(i, len(small.queries)) for i in range(len(small.queries) + 1)]
    assert ingested == [(0, 156), (156, 156)]  # before, and after one batch of the store's 256
    return result


def test_every_query_ran_in_both_modes_with_the_right_labels(run: EvalRun, small: EvalSet) -> None:
    assert [o.id for o in run.outcomes] == [q.id for q in small.queries]
    for o in run.outcomes:
        assert set(o.modes) == {"dense", "hybrid"}
        for row in o.modes["dense"].evidence:
            assert row.score_label == "dense"
            assert row.dense_distance is None
        for row in o.modes["hybrid"].evidence:
            assert row.score_label == "hybrid"
            assert row.dense_distance is not None  # the reference attaches it: absolute quality


def test_metrics_agree_with_the_recorded_ranking(run: EvalRun) -> None:
    for o in (o for o in run.outcomes if o.answerable):
        for outcome in o.modes.values():
            ranking = list(outcome.ranking)
            assert len(ranking) == outcome.candidates == len(set(ranking))
            ranks = {key: ranking.index(key) + 1 for key in o.relevant if key in ranking}
            assert ranks == outcome.relevant_ranks
            assert outcome.metrics["RR"] == pytest.approx(1 / min(ranks.values()) if ranks else 0.0)
            for k in run.ks:
                found = sum(1 for r in ranks.values() if r <= k)
                assert outcome.metrics[f"R@{k}"] == pytest.approx(found / len(o.relevant))
                assert 0.0 <= outcome.metrics[f"nDCG@{k}"] <= 1.0
    assert all(not o.modes["dense"].metrics for o in run.outcomes if not o.answerable)


def test_the_retry_ran_exactly_when_the_filtered_result_was_low_quality(run: EvalRun) -> None:
    threshold = SETTINGS.reference_threshold
    for o in run.outcomes:
        for outcome in o.modes.values():
            if o.category is None:
                assert outcome.path == "unfiltered"
                continue
            top = outcome.filtered_top_quality_score if outcome.retried else outcome.top_quality_score
            low = top is None or top < threshold
            assert outcome.retried == low
            assert outcome.path == ("unfiltered_retry" if low else "filtered")


def test_post_process_over_the_recorded_evidence_gives_the_recorded_gate(run: EvalRun) -> None:
    # What calibration relies on: the evidence alone reproduces top quality and the gate.
    for o in run.outcomes:
        for outcome in o.modes.values():
            again = post_process([row.candidate() for row in outcome.evidence], SETTINGS)
            assert again.top_quality_score == outcome.top_quality_score
            assert again.is_low_quality == outcome.is_low_quality


def test_label_check_only_for_the_kinds_that_claim_a_leg(run: EvalRun) -> None:
    for o in run.outcomes:
        assert (o.label_check is not None) == (o.kind in ("paraphrase", "exact_token"))


def test_answer_in_category_is_known_for_answerable_category_queries(run: EvalRun) -> None:
    for o in run.outcomes:
        if o.category is None or not o.answerable:
            assert o.answer_in_category is None
        else:
            assert o.answer_in_category is (o.kind != "cross_category")


def test_summary_counts_match_the_outcomes(run: EvalRun) -> None:
    summary = summarize(run)
    for gate in summary.gates:
        flagged = [o.modes[gate.mode].is_low_quality for o in run.outcomes]
        truth = [not o.answerable for o in run.outcomes]
        assert gate.scores.tp == sum(f and t for f, t in zip(flagged, truth, strict=True))
        assert gate.scores.fn == sum(not f and t for f, t in zip(flagged, truth, strict=True))
    for row in summary.retry:
        assert row.retried == sum(1 for o in run.outcomes if o.modes[row.mode].retried)
        assert row.helped + row.same + row.hurt == row.retried_answerable
    overall = {r.mode: r for r in summary.ranking if r.group == "all"}
    assert overall["dense"].queries == sum(1 for o in run.outcomes if o.answerable)


def test_markdown_has_every_section(run: EvalRun) -> None:
    text = evaluation_markdown(run, summarize(run))
    for heading in ("## Ranking", "## Category retry", "## The low-quality gate", "## Label check"):
        assert heading in text
    assert "| dense |" in text
    assert "| hybrid |" in text
    assert "wordllama" in text or "hashing" in text


def test_a_collection_that_is_not_empty_is_refused(
    client: MilvusClient, run: EvalRun, small: EvalSet
) -> None:
    embedder = make_embedder()
    store = MilvusKnowledgeStore(client, collection="evaluation", dim=embedder.dim)
    with pytest.raises(EvaluationError, match="already holds 156 chunks"):
        run_evaluation(small, store, embedder)


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"modes": ("sparse",)}, "use dense, hybrid or both"),
        ({"modes": ()}, "use dense, hybrid or both"),
        ({"ks": (0, 5)}, "whole numbers of at least 1"),
    ],
)
def test_bad_options_fail_before_anything_is_ingested(
    client: MilvusClient, small: EvalSet, options: dict[str, object], message: str
) -> None:
    store = MilvusKnowledgeStore(client, collection="untouched", dim=8)
    with pytest.raises(EvaluationError, match=message):
        run_evaluation(small, store, HashingEmbedder(8), **options)  # type: ignore[arg-type]
    assert store.count() == 0


def test_an_embedder_of_another_dimension_is_refused(client: MilvusClient, small: EvalSet) -> None:
    store = MilvusKnowledgeStore(client, collection="untouched", dim=8)
    with pytest.raises(EvaluationError, match="16-dimensional vectors, the store holds 8"):
        run_evaluation(small, store, HashingEmbedder(16))


# -- the progress bar -------------------------------------------------------------------------------


class _Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_each_step_draws_its_bar_on_a_terminal_one_after_the_other(monkeypatch: pytest.MonkeyPatch) -> None:
    terminal = _Terminal()
    monkeypatch.setattr(sys, "stderr", terminal)
    with ProgressStep("ingest", unit="chunk") as ingest, ProgressStep("evaluate", unit="query") as queries:
        for done in (0, 256, 300):
            ingest(done, 300)
        assert "ingest: 100%" in terminal.getvalue()  # finished before the next step starts
        assert "evaluate" not in terminal.getvalue()
        for done in range(6):
            queries(done, 5)
    text = terminal.getvalue()
    assert text.index("300/300") < text.index("evaluate: 100%") < text.index("5/5")


def test_a_step_that_fails_still_finishes_its_line(monkeypatch: pytest.MonkeyPatch) -> None:
    terminal = _Terminal()
    monkeypatch.setattr(sys, "stderr", terminal)

    def fail_midway() -> None:
        with ProgressStep("evaluate") as step:
            step(0, 4)
            step(1, 4)
            raise RuntimeError("engine gone")

    with pytest.raises(RuntimeError, match="engine gone"):
        fail_midway()
    assert terminal.getvalue().rstrip("\r").endswith("\n")
    assert "1/4" in terminal.getvalue()


@pytest.mark.parametrize("on_terminal", [False, True])
def test_the_bar_is_off_off_a_terminal_or_when_asked(
    monkeypatch: pytest.MonkeyPatch, on_terminal: bool
) -> None:
    stream = _Terminal() if on_terminal else io.StringIO()
    monkeypatch.setattr(sys, "stderr", stream)
    with progress_bar("evaluate", 3, enabled=not on_terminal) as bar:
        bar.update(3)
    assert bar.disable
    with ProgressStep("evaluate", enabled=not on_terminal) as step:
        step(0, 3)
        step(3, 3)
    assert stream.getvalue() == ""

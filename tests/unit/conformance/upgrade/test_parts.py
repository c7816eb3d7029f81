"""The upgrade check's parts without an engine: the labelled set, the settings, and the comparison's
account of what it could not compare (an engine without BM25 has no hybrid mode). The paired tests are
the evaluation package's (tests/unit/evaluation/test_stats.py)."""

from __future__ import annotations

from pathlib import Path

import pytest

from conformance.boundary._protocol import LookupReply, LookupRequest
from conformance.engines import EngineUnavailableError
from conformance.upgrade import (
    EngineEvaluation,
    Outcome,
    SuiteChanges,
    UpgradeInputError,
    UpgradeResult,
    compare,
    load_labelled_set,
    load_upgrade_settings,
)
from conformance.upgrade._sides import _Side

# -- the labelled set and the settings ------------------------------------------------------------------


def test_the_bundled_set_reads_whole_unanswerable_queries_included() -> None:
    labelled = load_labelled_set(None)
    assert (len(labelled.corpus), len(labelled.queries)) == (156, 137)
    assert sum(1 for q in labelled.queries if not q.relevant) == 25
    small = load_labelled_set(None, limit=10)
    assert len(small.queries) == 10
    assert {q.kind for q in small.queries} == {q.kind for q in labelled.queries}


def test_a_beir_folder_without_the_split_says_which_file_is_missing(tmp_path: Path) -> None:
    (tmp_path / "corpus.jsonl").write_text('{"_id": "d#0", "text": "x"}\n')
    (tmp_path / "queries.jsonl").write_text('{"_id": "q", "text": "x"}\n')
    with pytest.raises(UpgradeInputError, match=r"qrels/dev\.tsv: no qrels for split 'dev'"):
        load_labelled_set(tmp_path, split="dev")


def test_settings_override_defaults_and_an_unknown_key_is_an_error(tmp_path: Path) -> None:
    good = tmp_path / "good.toml"
    good.write_text("[upgrade]\nmax-metric-drop = 0.05\n[rag]\nreturn-n = 5\n")
    settings = load_upgrade_settings(good)
    assert (settings.upgrade.max_metric_drop, settings.rag.return_n, settings.upgrade.alpha) == (
        0.05,
        5,
        0.05,
    )
    bad = tmp_path / "bad.toml"
    bad.write_text("[upgrade]\nmax-metric-dorp = 0.05\n")
    with pytest.raises(UpgradeInputError, match="max-metric-dorp"):
        load_upgrade_settings(bad)


# -- what could not be compared -------------------------------------------------------------------------

NO_BM25 = "EngineFeatureError: this engine has no BM25 full-text search, so hybrid search cannot run"


LABELLED = load_labelled_set(None, limit=6)


def _evaluation(engine: str, *, hybrid: str | None = None) -> EngineEvaluation:
    """Both modes answered alike for every query (or hybrid not run, saying why)."""
    evaluation = EngineEvaluation(engine, version=engine)
    answers = [
        Outcome(q.id, tuple(q.relevant)[:1], 0.6, False, "RELEVANT", "unfiltered", 0.01)
        for q in LABELLED.queries
    ]
    evaluation.outcomes["dense"] = answers
    if hybrid is None:
        evaluation.outcomes["hybrid"] = list(answers)
    else:
        evaluation.not_run["hybrid"] = hybrid
    return evaluation


def _compare(old: EngineEvaluation, new: EngineEvaluation) -> UpgradeResult:
    return compare(
        LABELLED,
        old,
        new,
        SuiteChanges(compared=False, why_not="skipped (--no-suite)"),
        load_upgrade_settings(None),
        adapter="reference",
        interleaved=True,
        old_label=old.engine,
        new_label=new.engine,
    )


def test_from_an_engine_without_bm25_hybrid_is_named_as_not_compared_with_the_reason() -> None:
    result = _compare(_evaluation("milvus-2.3.5", hybrid=NO_BM25), _evaluation("lite"))
    assert result.verdict == "SAFE"  # dense was compared and did not move
    assert {row.mode for row in result.metrics} == {"dense"}
    [line] = [n for n in result.not_compared if n.startswith("hybrid")]
    assert "the old engine (milvus-2.3.5) cannot run it" in line
    assert "no BM25" in line


def test_to_an_engine_without_bm25_the_lost_mode_is_a_regression() -> None:
    result = _compare(_evaluation("lite"), _evaluation("milvus-2.3.5", hybrid=NO_BM25))
    assert result.verdict == "REGRESSES"
    assert any(
        "hybrid mode ran on the old engine (lite) but the new engine (milvus-2.3.5) cannot run it" in r
        and "no BM25" in r
        for r in result.regressions
    )


# -- a failing lookup: the adapter's answer, or the engine gone -----------------------------------------


class _Failing:
    def __init__(self, failures: int = 99) -> None:
        self.failures = failures
        self.calls = 0

    def lookup(self, request: object) -> object:
        self.calls += 1
        if self.calls <= self.failures:
            raise RuntimeError("this engine cannot do that")
        return LookupReply(
            blocks=(), top_quality_score=0.4, is_low_quality=True, relevance_level="WEAK", path="unfiltered"
        )


class _Engine:
    def __init__(self, reachable: bool) -> None:
        self.reachable = reachable
        self.abandoned = False  # the kit has not given up on it (a call past its deadline would)

    def abandon(self, why: str = "") -> None:
        self.abandoned = True

    def check_reachable(self) -> None:
        if not self.reachable:
            raise EngineUnavailableError("Milvus at http://127.0.0.1:1 did not answer the kit's own client")


def _ask(reachable: bool, failures: int = 99) -> tuple[EngineEvaluation, Outcome | None, _Failing]:
    evaluation = EngineEvaluation("uri:http://127.0.0.1:1")
    adapter = _Failing(failures)
    side = _Side("uri:http://127.0.0.1:1", evaluation, adapter, None, _Engine(reachable))  # type: ignore[arg-type]
    request = LookupRequest(query_text="q", query_vector=(1.0, 0.0), mode="dense")
    return evaluation, side.ask(request, "q001"), adapter


def test_a_lookup_that_fails_twice_on_a_live_engine_is_that_querys_error_and_the_mode_still_runs() -> None:
    evaluation, outcome, adapter = _ask(reachable=True)
    assert adapter.calls == 2  # asked once more, as the suite does with engine errors
    assert evaluation.failed is None
    assert evaluation.not_run == {}
    assert outcome is not None
    assert outcome.error == "RuntimeError: this engine cannot do that"
    assert outcome.seconds is None


def test_a_lookup_that_fails_once_is_answered_by_its_retry() -> None:
    _, outcome, adapter = _ask(reachable=True, failures=1)
    assert adapter.calls == 2
    assert outcome is not None
    assert outcome.error is None
    assert outcome.seconds is not None
    assert outcome.level == "WEAK"


def test_a_lookup_that_fails_because_the_engine_is_gone_is_an_infrastructure_failure() -> None:
    evaluation, outcome, _ = _ask(reachable=False)
    assert outcome is None
    assert evaluation.not_run == {}
    assert evaluation.failed is not None
    assert "was lost at query q001" in evaluation.failed


def _with_suite(suite: SuiteChanges) -> UpgradeResult:
    return compare(
        LABELLED,
        _evaluation("old"),
        _evaluation("new"),
        suite,
        load_upgrade_settings(None),
        adapter="reference",
        interleaved=True,
        old_label="old",
        new_label="new",
    )


def test_a_newly_failing_scenario_is_a_regression_even_when_retrieval_is_unchanged() -> None:
    failing = {"id": "engine-upsert-replaces", "old": "passed", "new": "failed", "message": "two rows kept"}
    result = _with_suite(SuiteChanges(compared=True, newly_failing=[failing]))
    assert result.exit_code == 1
    assert result.regressions == ["1 scenarios newly fail on new: engine-upsert-replaces"]
    quiet = _with_suite(
        SuiteChanges(compared=True, newly_passing=[{**failing, "old": "failed", "new": "passed"}])
    )
    assert quiet.exit_code == 0


def test_a_suite_the_kit_could_not_judge_makes_the_upgrade_not_judged() -> None:
    result = _with_suite(
        SuiteChanges(compared=False, why_not="NOT JUDGED: new: not run: engine did not start")
    )
    assert result.exit_code == 2
    assert "conformance suite and engine checks: NOT JUDGED: new: not run" in result.not_compared[0]

"""The upgrade check's parts without an engine: the paired tests, the labelled set, the settings, and the
comparison's account of what it could not compare (an engine without BM25 has no hybrid mode)."""

from __future__ import annotations

from pathlib import Path

import pytest

from conformance.boundary._protocol import LookupRequest
from conformance.commands._upgrade_compare import SuiteChanges, UpgradeResult, compare
from conformance.commands._upgrade_data import UpgradeInputError, bundled_set_dir, load_beir
from conformance.commands._upgrade_eval import EngineEvaluation, Outcome, _Side
from conformance.commands._upgrade_settings import load_upgrade_settings
from conformance.engines import EngineUnavailableError
from evaluation import adjust, paired_test

# -- the paired tests -----------------------------------------------------------------------------------


def test_identical_answers_have_no_difference_and_p_1() -> None:
    test = paired_test([0.2, 0.5, 1.0, 0.0], [0.2, 0.5, 1.0, 0.0])
    assert (test.delta, test.ci_low, test.ci_high, test.p_value, test.d_z) == (0.0, 0.0, 0.0, 1.0, None)


def test_a_consistent_drop_is_significant_with_an_interval_below_zero() -> None:
    old = [0.5 + 0.01 * i for i in range(30)]
    new = [x - 0.2 + (0.02 if i % 3 else -0.02) for i, x in enumerate(old)]
    test = paired_test(old, new)
    assert test.p_value < 0.001
    assert test.ci_low < test.delta < test.ci_high < 0
    assert test.delta == pytest.approx(-0.2, abs=0.01)


def test_noise_around_zero_is_not_significant() -> None:
    old = [0.0, 1.0] * 10
    new = [1.0, 0.0] * 5 + [0.0, 1.0] * 5  # five queries better, five worse, ten the same
    test = paired_test(old, new)
    assert test.delta == 0.0
    assert test.p_value > 0.5
    assert test.ci_low < 0 < test.ci_high


def test_the_pairing_matters_a_small_gain_on_every_query_is_found_despite_wide_spread() -> None:
    # Queries differ a lot from each other (0 to 0.95); the new engine gains 0.03 on each one. Compared
    # unpaired, 0.03 is lost in the spread; paired, every query agrees.
    old = [0.05 * i for i in range(20)]
    new = [x + 0.03 for x in old]
    test = paired_test(old, new)
    assert test.p_value < 0.001
    assert test.ci_low == pytest.approx(0.03)
    assert test.ci_high == pytest.approx(0.03)


def test_adjusted_q_values_are_never_below_the_p_values() -> None:
    tests = adjust([paired_test([0, 1, 1, 0, 1] * 4, [1, 1, 0, 0, 0] * 4), paired_test([1.0] * 8, [0.0] * 8)])
    assert all(t.q_value is not None and t.q_value >= t.p_value for t in tests)


# -- the labelled set and the settings ------------------------------------------------------------------


def test_the_bundled_set_reads_whole_unanswerable_queries_included() -> None:
    labelled = load_beir(bundled_set_dir())
    assert (len(labelled.chunks), len(labelled.queries)) == (156, 137)
    assert sum(1 for q in labelled.queries if not q.relevant) == 25
    small = labelled.limited(10)
    assert len(small.queries) == 10
    assert {q.kind for q in small.queries} == {q.kind for q in labelled.queries}


def test_a_beir_folder_without_the_split_says_which_file_is_missing(tmp_path: Path) -> None:
    (tmp_path / "corpus.jsonl").write_text('{"_id": "d#0", "text": "x"}\n')
    (tmp_path / "queries.jsonl").write_text('{"_id": "q", "text": "x"}\n')
    with pytest.raises(UpgradeInputError, match=r"qrels/dev\.tsv is missing"):
        load_beir(tmp_path, split="dev")


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


LABELLED = load_beir(bundled_set_dir()).limited(6)


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
    assert "milvus-2.3.5 could not run it" in line
    assert "no BM25" in line


def test_to_an_engine_without_bm25_the_lost_mode_is_a_regression() -> None:
    result = _compare(_evaluation("lite"), _evaluation("milvus-2.3.5", hybrid=NO_BM25))
    assert result.verdict == "REGRESSES"
    assert any(
        "hybrid mode ran on lite but not on milvus-2.3.5" in r and "no BM25" in r for r in result.regressions
    )


# -- a failing lookup: the adapter's answer, or the engine gone -----------------------------------------


class _Failing:
    def lookup(self, request: object) -> object:
        raise RuntimeError("this engine cannot do that")


class _Engine:
    def __init__(self, reachable: bool) -> None:
        self.reachable = reachable

    def check_reachable(self) -> None:
        if not self.reachable:
            raise EngineUnavailableError("Milvus at http://127.0.0.1:1 did not answer the kit's own client")


def _ask(reachable: bool) -> EngineEvaluation:
    evaluation = EngineEvaluation("uri:http://127.0.0.1:1")
    side = _Side("uri:http://127.0.0.1:1", evaluation, _Failing(), None, _Engine(reachable))  # type: ignore[arg-type]
    request = LookupRequest(query_text="q", query_vector=(1.0, 0.0), mode="dense")
    assert side.ask(request, "q001") is None
    return evaluation


def test_a_lookup_that_fails_on_a_live_engine_means_the_mode_does_not_run_there() -> None:
    evaluation = _ask(reachable=True)
    assert evaluation.failed is None
    assert evaluation.not_run == {
        "dense": "lookup failed at query q001: RuntimeError: this engine cannot do that"
    }


def test_a_lookup_that_fails_because_the_engine_is_gone_is_an_infrastructure_failure() -> None:
    evaluation = _ask(reachable=False)
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

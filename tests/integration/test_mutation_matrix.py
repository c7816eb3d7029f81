"""The kit has teeth: each broken miniature fails exactly where ``matrix.toml`` says; conforming ones pass.

One run of the whole kit per miniature, on one shared Milvus engine and one Hypothesis seed (fixed here
so the matrix is reproducible; ``RQS_SELFTEST_SEED`` overrides it). Every scenario runs for every
miniature: "all other scenarios pass" is checked as stated, never on a subset.
"""

from __future__ import annotations

import os
import tomllib
from collections import Counter

import pytest

from conformance.commands._matrix import SelftestResult, format_selftest_matrix, load_matrix
from conformance.commands._selftest import default_jobs, run_selftest
from conformance.judging._spec_model import RULES
from tests.miniatures import MATRIX_PATH

EXPECTATIONS = load_matrix(MATRIX_PATH)
SEED = int(os.environ.get("RQS_SELFTEST_SEED", "20260728"))
# One run at a time per core (the selftest's default): a run keeps the shared engine busy for about 40%
# of its time, and the suite's other xdist workers run beside them. On two cores, measured when
# `pytest -n auto` gave the suite two workers: it took 293 s with two runs, 313 s with three and 346 s
# with four (more processes than cores only make them thrash).
JOBS = default_jobs()


@pytest.fixture(scope="module")
def selftest() -> SelftestResult:
    outcome = run_selftest(EXPECTATIONS, package="tests.miniatures", seed=SEED, profile="selftest", jobs=JOBS)
    print(format_selftest_matrix(outcome))  # shown with -s, and in the log of a failing run
    return outcome


def test_the_matrix_is_big_enough_to_mean_something() -> None:
    kinds = Counter(e.kind for e in EXPECTATIONS)
    assert kinds["broken"] >= 15, kinds
    assert kinds["conforming"] >= 3, kinds
    assert kinds["noted"] >= 3, kinds


def test_every_rule_has_a_miniature_taking_its_freedom_or_a_reason_why_none() -> None:
    without = tomllib.loads(MATRIX_PATH.read_text(encoding="utf-8")).get("rules_without_freedom", {})
    taken = {rule for e in EXPECTATIONS if e.kind != "broken" for rule in (*e.freedoms, *e.notes)}
    named = taken | set(without)
    assert not named - set(RULES), (
        f"the matrix names rules the model does not have: {sorted(named - set(RULES))}"
    )
    assert not set(RULES) - named, (
        f"rules with no freedom miniature and no reason: {sorted(set(RULES) - named)}"
    )
    assert not taken & set(without), (
        f"rules listed as free and as without freedom: {sorted(taken & set(without))}"
    )


def test_noted_miniatures_name_rules_that_only_note() -> None:
    for e in EXPECTATIONS:
        failing = {rule for rule in e.notes if RULES[rule].fails}
        assert not failing, f"{e.name} expects notes of rules that fail replies: {sorted(failing)}"


@pytest.mark.parametrize("name", [e.name for e in EXPECTATIONS])
def test_miniature_is_caught_exactly_where_the_matrix_says(selftest: SelftestResult, name: str) -> None:
    result = next(r for r in selftest.results if r.expectation.name == name)
    assert result.error is None, f"{name}: {result.error}\n{result.output[-4000:]}"
    assert not result.unexpected, (
        f"{name} violates {sorted(result.expectation.violates) or 'nothing'}, yet these scenarios errored or "
        f"failed it under another requirement: "
        f"{ {i: (result.statuses[i], result.broken.get(i)) for i in sorted(result.unexpected)} } "
        "(a kit bug, a misattributed rule, an over-specifying scenario, or a miniature breaking more than "
        "one thing)"
    )
    assert not result.missed, (
        f"{name} passed scenarios the matrix expects to catch it: {sorted(result.missed)} "
        "(the kit lost teeth)"
    )
    assert not result.unnoted, f"{name}: the report gave none of the notes or advice {sorted(result.unnoted)}"


def test_every_broken_miniature_is_caught(selftest: SelftestResult) -> None:
    escaped = [r.expectation.name for r in selftest.broken if not r.caught]
    caught, total = selftest.mutation_score
    assert not escaped, f"mutation score {caught}/{total}; escaped: {escaped}"


def test_every_scenario_catches_some_broken_miniature(selftest: SelftestResult) -> None:
    assert selftest.scenario_ids, "the runs produced no scenarios"
    idle = selftest.scenarios_catching_nothing()
    assert not idle, f"scenarios no broken miniature fails (untested teeth; add a miniature): {idle}"


def test_every_requirement_has_a_broken_miniature_it_catches(selftest: SelftestResult) -> None:
    requirements = {req for r in selftest.results for req in r.requirements.values()}
    caught = {req for r in selftest.broken for i in r.attributed for req in r.broken.get(i, ())}
    assert requirements <= caught, f"requirements no miniature violates: {sorted(requirements - caught)}"


def test_the_matrix_names_only_scenarios_and_requirements_that_exist(selftest: SelftestResult) -> None:
    known = set(selftest.scenario_ids)
    requirements = {req for r in selftest.results for req in r.requirements.values()}
    unknown = {e.name: sorted(e.violates - requirements) for e in EXPECTATIONS if e.violates - requirements}
    assert not unknown, f"matrix.toml names requirement ids the kit does not have: {unknown}"
    named = {e.name: e.caught_by - known for e in EXPECTATIONS}
    stale = {name: sorted(ids) for name, ids in named.items() if ids}
    assert not stale, f"matrix.toml names scenario ids the kit no longer has: {stale}"

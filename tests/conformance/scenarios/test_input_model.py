"""The input model (features/spec/input-model.md) holds: each class is drawn where the table says.

An explicit class must be in every run's explicit inputs, whatever the seed; a generated one in some
runs (the page gives the share of :data:`SEEDS` measured here); a class not drawn says why. Delete a
class from the generator and its probe finds nothing: the last test does that for a few.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from conformance.corpus import _knowledge_base
from conformance.scenarios._input_model import FAMILIES, INPUT_MODEL, Drawn, render_table

ROOT = Path(__file__).resolve().parents[3]
PAGE = ROOT / "features" / "spec" / "input-model.md"
SEEDS = range(40)  # the page's shares are of these seeds
EDGE_SEEDS = (344017094, 558946881, 20260728, 2**32 - 1)


@pytest.fixture(scope="module")
def runs() -> list[Drawn]:
    return [Drawn.of(seed) for seed in SEEDS]


def _shares(runs: list[Drawn]) -> dict[str, float]:
    return {
        c.name: sum(bool(c.probe(d)) for d in runs) / len(runs)
        for c in INPUT_MODEL
        if c.drawing == "generated" and c.probe is not None
    }


def test_the_page_holds_the_table_with_the_measured_shares(runs: list[Drawn]) -> None:
    table = render_table(_shares(runs))
    assert table in PAGE.read_text(encoding="utf-8"), f"features/spec/input-model.md should hold:\n{table}"


@pytest.mark.parametrize("c", [c for c in INPUT_MODEL if c.drawing == "explicit"], ids=lambda c: c.name)
def test_an_explicit_class_is_in_every_run(runs: list[Drawn], c) -> None:  # type: ignore[no-untyped-def]
    assert c.probe is not None
    missing = [d.seed for d in (*runs, *map(Drawn.of, EDGE_SEEDS)) if not c.probe(d)]
    assert not missing, f"{c.dimension}: {c.name!r} is not drawn by seeds {missing}"


@pytest.mark.parametrize("c", [c for c in INPUT_MODEL if c.drawing == "generated"], ids=lambda c: c.name)
def test_a_generated_class_is_in_some_runs(runs: list[Drawn], c) -> None:  # type: ignore[no-untyped-def]
    assert c.probe is not None
    assert any(c.probe(d) for d in runs), f"{c.dimension}: {c.name!r} is drawn by none of {len(runs)} seeds"


def test_a_class_not_drawn_says_why() -> None:
    for c in INPUT_MODEL:
        if c.drawing == "not drawn":
            assert c.why, c
            assert c.probe is None, c
        else:
            assert c.probe is not None, c
            assert c.families, c


def test_every_family_names_scenarios_that_exist() -> None:
    ids = set()
    for feature in (ROOT / "features").glob("*.feature"):
        ids |= set(re.findall(r"@id:(\S+)", feature.read_text(encoding="utf-8")))
    for family, scenarios in FAMILIES.items():
        assert set(scenarios) <= ids, (family, sorted(set(scenarios) - ids))
    named = {f for c in INPUT_MODEL for f in c.families}
    assert named <= set(FAMILIES), sorted(named - set(FAMILIES))


def _class(name: str):  # type: ignore[no-untyped-def]
    (found,) = [c for c in INPUT_MODEL if c.name == name]
    return found


@pytest.mark.parametrize(
    ("constant", "value", "name"),
    [
        # the backslash kind gone: a filter that escapes quotes only is never tried
        ("_CATEGORY_KINDS", lambda kinds: tuple(k for k in kinds if "\\" not in k[0]), "a backslash"),
        # no absent prefix of a category
        ("_ABSENT", lambda absent: tuple(a for a in absent if "\\" not in a), "a prefix of another"),
    ],
)
def test_deleting_a_class_from_the_generator_fails_its_probe(
    monkeypatch: pytest.MonkeyPatch, constant: str, value, name: str
) -> None:  # type: ignore[no-untyped-def]
    c = _class(name)
    assert c.probe is not None
    assert c.probe(Drawn.of(1))
    monkeypatch.setattr(_knowledge_base, constant, value(getattr(_knowledge_base, constant)))
    assert not c.probe(Drawn.of(1))

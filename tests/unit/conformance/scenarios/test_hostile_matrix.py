"""The field x class matrix (issue 51): every field of every request the kit sends, crossed with every
hostile class of its type, is drawn on every run whatever the seed; a class taken out of the catalogue
leaves its cells empty; a field added to the protocol adds its cells and draws them with no case written.
"""

from __future__ import annotations

from collections import Counter

import pytest
from pydantic import BaseModel

from conformance.boundary import _protocol
from conformance.boundary._protocol import QualityRequest
from conformance.corpus import _hostile
from conformance.corpus._hostile import CATALOGUE, HostileClass, field_types
from conformance.scenarios import _explicit, _hostile_examples
from conformance.scenarios._hostile_matrix import cells, missing_cells, requests_of
from conformance.scenarios._input_model import Drawn

SEEDS = (0, 1, 344017094, 2**32 - 1)
PURE = ("QualityRequest", "PostProcessRequest")


@pytest.fixture(scope="module")
def drawn() -> dict[int, Drawn]:
    return {seed: Drawn.of(seed) for seed in SEEDS}


@pytest.mark.parametrize("seed", SEEDS)
def test_every_cell_is_drawn_whatever_the_seed(drawn: dict[int, Drawn], seed: int) -> None:
    missing = missing_cells(requests_of(drawn[seed]))
    assert not missing, f"seed {seed}: {len(missing)} cells never drawn:\n" + "\n".join(map(str, missing))


def test_the_matrix_covers_every_type_and_request() -> None:
    by_model = Counter(c.model for c in cells())
    assert set(by_model) == set(_hostile.REQUEST_MODELS)
    assert {c.hostile.type for c in cells()} >= {
        "identifier", "category", "free text", "distance or score", "setting", "count or rank", "vector",
        "optional",
    }  # fmt: skip


def _pure_requests(monkeypatch: pytest.MonkeyPatch, drawn: Drawn) -> dict[str, object]:
    """The pure capabilities' requests with the hostile examples rebuilt from the catalogue as it is now."""
    post = _hostile_examples._post_examples()
    quality = _hostile_examples._quality_examples()
    base_post = tuple(
        e for e in _explicit.POST_PROCESS_EXAMPLES if e not in _hostile_examples.HOSTILE_POST_PROCESS
    )
    monkeypatch.setattr(_explicit, "POST_PROCESS_EXAMPLES", (*base_post, *post))
    base_q = [e for e in _explicit.QUALITY_EXAMPLES if e["request"] not in _hostile_examples.HOSTILE_QUALITY]
    monkeypatch.setattr(_explicit, "QUALITY_EXAMPLES", (*base_q, *({"request": r} for r in quality)))
    return requests_of(drawn)


# Classes the rest of the explicit inputs draw too (their cells stay drawn when the catalogue's values go).
_ALSO_ELSEWHERE = {"null", "empty", "at its bounds"}


_PURE_TYPES = {c.hostile.type for c in cells() if c.model in PURE}


@pytest.mark.parametrize(
    "hostile",
    [c for c in CATALOGUE if c.values and c.name not in _ALSO_ELSEWHERE and c.type in _PURE_TYPES],
    ids=lambda c: f"{c.type}:{c.name}",
)
def test_a_class_taken_out_of_the_catalogue_leaves_its_cells_empty(
    drawn: dict[int, Drawn], monkeypatch: pytest.MonkeyPatch, hostile: HostileClass
) -> None:
    seed = SEEDS[0]
    index = CATALOGUE.index(hostile)
    emptied = HostileClass(hostile.type, hostile.name, (), hostile.drawn, pairs=hostile.pairs)
    monkeypatch.setattr(_hostile, "CATALOGUE", (*CATALOGUE[:index], emptied, *CATALOGUE[index + 1 :]))
    missing = {
        c.field for c in missing_cells(_pure_requests(monkeypatch, drawn[seed])) if c.hostile == emptied
    }
    assert missing, (
        f"without its values, {hostile.name!r} is still drawn in every field: its probe bites nothing"
    )


def test_without_the_hostile_examples_the_pure_cells_are_empty(
    drawn: dict[int, Drawn], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(_hostile_examples, "class_values", lambda *a, **k: [])
    missing = missing_cells(_pure_requests(monkeypatch, drawn[SEEDS[0]]))
    pure = [c for c in cells() if c.model in PURE]
    # What the older explicit examples draw stays (null scores, rank 1, ...); most cells go.
    assert len([c for c in missing if c.model in PURE]) > len(pure) * 2 // 3


class _Widened(QualityRequest):
    """The normalizer's request with one field more, as a protocol change would add it."""

    boost_weight: float = 1.0


def test_a_field_added_to_the_protocol_adds_its_cells_and_draws_them(
    drawn: dict[int, Drawn], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(_protocol, "QualityRequest", _Widened)
    monkeypatch.setattr(_hostile_examples, "QualityRequest", _Widened)
    monkeypatch.setattr(_hostile_examples, "_DENSE", _Widened(score_label="dense", score=0.5))
    new = [c for c in cells() if c.model == "QualityRequest" and c.field == "boost_weight"]
    assert {c.hostile.name for c in new} >= {"every decade 1e-12..1e12", "subnormals", "-0.0"}
    requests = _pure_requests(monkeypatch, drawn[SEEDS[0]])
    assert not [c for c in missing_cells(requests) if c.field == "boost_weight"]


def test_a_field_no_rule_types_is_named() -> None:
    class Odd(BaseModel):
        weights: dict[str, int]

    with pytest.raises(TypeError, match=r"Odd\.weights .* FIELD_TYPES"):
        field_types(Odd)

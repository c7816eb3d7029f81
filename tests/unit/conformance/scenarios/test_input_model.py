"""The input model (features/spec/input-model.md) holds: each class is drawn where the table says.

An explicit class must be in every run's explicit inputs, whatever the seed; a generated one in some
runs (the page gives the share of :data:`SEEDS` measured here); a class not drawn says why. Delete a
class from the generator and its probe finds nothing: :data:`DELETIONS` takes each drawn class out of the
generator (the knowledge base's constants and functions, the explicit post-process examples, or a copy of
the feature files), and the last tests check every drawn class has one and its probe then finds nothing.
"""

from __future__ import annotations

import re
import shutil
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from conformance.corpus import _explicit_requests, _knowledge_base
from conformance.scenarios import _explicit, _input_model
from conformance.scenarios._input_model import FAMILIES, INPUT_MODEL, Drawn, InputClass, render_table
from tests.unit.conformance.scenarios._class_deletions import (
    away_from_the_threshold,
    beside_the_nearest,
    between_two_chunks,
    emoji,
    hybrid_first,
    keys_apart,
    kinds_without,
    latin,
    lookups_at_the_default,
    no_cap_one,
    no_long_unfiltered_hybrid,
    no_separator,
    no_zero_distance,
    one_category_per_document,
    one_label,
    prefix_of_a_category,
    quality_without_zero,
    ranks_within,
    return_n_within,
    short_hints,
    threshold_default,
    unfiltered_first,
    without_pairs,
)

ROOT = Path(__file__).resolve().parents[4]
PAGE = ROOT / "features" / "spec" / "input-model.md"
SEEDS = range(40)  # the page's shares are of these seeds
EDGE_SEEDS = (344017094, 558946881, 20260728, 2**32 - 1)
DELETION_SEEDS = (0, 1, 344017094)  # an explicit class's deletion is checked on these


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


@dataclass(frozen=True)
class Deletion:
    """One class taken out of one place the generator draws it from."""

    what: str
    apply: Callable[[pytest.MonkeyPatch, Path], None]


def _kb(name: str, change: Callable[[Any], Any], what: str) -> Deletion:
    """A knowledge-base constant or function (or one of the explicit requests'), changed."""
    module = _explicit_requests if hasattr(_explicit_requests, name) else _knowledge_base
    return Deletion(what, lambda mp, _: mp.setattr(module, name, change(getattr(module, name))))


def _to(value: Any) -> Callable[[Any], Any]:
    return lambda _: value


def _all(*deletions: Deletion) -> Deletion:
    """Several changes at once: the class has more than one source in one place."""

    def apply(mp: pytest.MonkeyPatch, tmp_path: Path) -> None:
        for d in deletions:
            d.apply(mp, tmp_path)

    return Deletion("; ".join(d.what for d in deletions), apply)


_BOTH = ("POST_PROCESS_EXAMPLES", "HINT_PAIR_EXAMPLES")


def _examples(
    change: Callable[[dict[str, Any]], dict[str, Any]], what: str, lists: tuple[str, ...] = _BOTH
) -> Deletion:
    """Every explicit post-process example and hint pair (or those of ``lists``), changed (``_explicit``
    itself is not edited)."""

    def apply(mp: pytest.MonkeyPatch, _: Path) -> None:
        for name in lists:
            mp.setattr(_explicit, name, tuple(change(dict(e)) for e in getattr(_explicit, name)))

    return Deletion(what, apply)


def _feature(name: str, drop: Callable[[str], bool], what: str) -> Deletion:
    """A copy of ``features/`` whose ``name`` lacks the lines ``drop`` picks (and a dropped step's table)."""

    def apply(mp: pytest.MonkeyPatch, tmp_path: Path) -> None:
        copy = tmp_path / "features"
        shutil.copytree(ROOT / "features", copy, dirs_exist_ok=True)
        path = copy / name
        path.write_text(_without(path.read_text(encoding="utf-8"), drop), encoding="utf-8")
        mp.setattr(_input_model, "_FEATURES", copy)

    return Deletion(f"{name}: {what}", apply)


def _without(text: str, drop: Callable[[str], bool]) -> str:
    out: list[str] = []
    in_dropped_table = False
    for line in text.splitlines(keepends=True):
        row = line.lstrip().startswith("|")
        if drop(line):
            in_dropped_table = not row  # a step's table goes with it; a row goes alone
        elif not (row and in_dropped_table):
            in_dropped_table = False
            out.append(line)
    return "".join(out)


def _step(text: str) -> Callable[[str], bool]:
    return lambda line: (
        line.lstrip().startswith(("Given ", "When ", "Then ", "And ", "But ")) and text in line
    )


_SINGLE_VECTORS = _kb("_duplicate", _to(list), "no vector held by two chunks")
_LATIN_KEYWORDS = _kb("_KEYWORD_SCRIPT", _to("latin"), "every keyword in Latin letters")

DELETIONS: dict[tuple[str, str], tuple[Deletion, ...]] = {
    ("ids", "collide when concatenated (doc1/11, doc11/1)"): (
        _kb("_COLLIDING_DOC", _to("doc-11"), "doc11 is doc-11"),
        _examples(keys_apart, "no two candidates of a batch whose keys collide"),
    ),
    ("ids", "contain the separator `#`"): (_examples(no_separator, "`#` in no docId"),),
    ("ids", "other scripts"): (
        _kb("_DOC_IDS", lambda ids: tuple(filter(str.isascii, ids)), "ASCII id templates"),
    ),
    ("ids", "long (36 characters or more)"): (
        _kb("_DOC_IDS", lambda ids: tuple(t for t in ids if t != "{uuid}"), "no UUID ids"),
    ),
    ("categories", "a quote"): (
        _kb("_CATEGORY_KINDS", kinds_without(lambda v: "'" in v or '"' in v), "no quote"),
    ),
    ("categories", "a backslash"): (
        _kb("_CATEGORY_KINDS", kinds_without(lambda v: "\\" in v), "no backslash"),
    ),
    ("categories", "a newline"): (_kb("_CATEGORY_KINDS", kinds_without(lambda v: "\n" in v), "no newline"),),
    ("categories", "a tab"): (_kb("_CATEGORY_KINDS", kinds_without(lambda v: "\t" in v), "no tab"),),
    ("categories", "`%` and `_`"): (
        _kb("_CATEGORY_KINDS", kinds_without(lambda v: "%" in v or "_" in v), "no % or _"),
    ),
    ("categories", "leading and trailing space"): (
        _kb("_CATEGORY_KINDS", kinds_without(lambda v: v != v.strip()), "no padded category"),
    ),
    ("categories", "a prefix of another"): (
        _kb("_ABSENT", prefix_of_a_category, "no absent category is a prefix of a category"),
    ),
    ("categories", "a category's identifier twin (punctuation made `_`)"): (
        _kb("_TWINNED_KIND", _to(None), "no twin asked"),
    ),
    ("categories", "other scripts"): (
        _kb("_CATEGORY_KINDS", kinds_without(lambda v: not v.isascii()), "ASCII"),
    ),
    ("categories", "absent (no chunk has it; chunks with none)"): (
        _kb(
            "_ABSENT", lambda absent: (None,) * len(absent), "the absent categories' requests ask unfiltered"
        ),
    ),
    ("texts and queries", "blank"): (
        _kb("_BLANKS", _to((_explicit_requests.NO_MATCH_HINT,)), "a word no text holds for every blank text"),
    ),
    ("texts and queries", "punctuation only"): (
        _kb("_SHAPES", lambda shapes: tuple(s for s in shapes if s != "punctuation"), "no punctuation shape"),
    ),
    ("texts and queries", "very long (40 words or more)"): (
        _kb("_SHAPES", lambda shapes: tuple(s for s in shapes if s != "long"), "no long shape"),
    ),
    ("texts and queries", "other scripts"): (
        _all(_kb("_QUERY_NOISE", lambda words: tuple(filter(latin, words)), "Latin noise"), _LATIN_KEYWORDS),
    ),
    ("texts and queries", "emoji"): (
        _kb("_OTHER_SCRIPTS", lambda words: tuple(w for w in words if not emoji(w)), "no emoji in texts"),
    ),
    ("texts and queries", "mixed scripts"): (
        _all(
            _kb("_OTHER_SCRIPTS", lambda words: tuple(filter(latin, words)), "Latin words"), _LATIN_KEYWORDS
        ),
    ),
    ("vectors", "exact ties"): (_SINGLE_VECTORS,),
    ("vectors", "near ties (equal in reals, float32 apart)"): (
        _kb("_NEAR_TIES", _to(0), "no query between two"),
    ),
    ("vectors", "duplicates"): (_SINGLE_VECTORS,),
    ("vectors", "zero distance handed in (a dense score of 0.0)"): (
        Deletion("no normalizer example of distance 0.0", quality_without_zero),
        _examples(no_zero_distance, "no candidate of distance 0.0"),
    ),
    ("vectors", "zero distance"): (
        _kb("_at_the_duplicate", _to(between_two_chunks), "the first tie between two chunks, on none"),
    ),
    ("corpora", "a document of one chunk"): (
        _all(
            _kb("_SIZES", lambda sizes: tuple(n for n in sizes if n != 1), "no size 1"),
            _kb("_TINY_CHUNKS", _to(2), "the tiny document of two chunks"),
        ),
    ),
    ("corpora", "many chunks per document (12)"): (
        _all(
            _kb("_SIZES", lambda sizes: tuple(n for n in sizes if n < 12), "no size 12"),
            _kb("_MANY_CHUNKS", _to(11), "doc1 of eleven chunks (doc1/10 and doc11/0 still collide)"),
        ),
    ),
    ("corpora", "a document over several categories"): (
        _kb("SEVERAL_CATEGORIES_DOC", _to("no such document"), "no document's chunks cycle categories"),
        _examples(one_category_per_document, "each document's candidates in its first one's category"),
    ),
    ("corpora", "a category of one chunk"): (_kb("_TINY_CHUNKS", _to(2), "the tiny category of two chunks"),),
    ("requests", "k larger than the corpus"): (
        _kb("_PAST_THE_KB", _to(0), "k = the generated chunks' count"),
    ),
    ("requests", "return-n above the candidates"): (
        _examples(return_n_within, "return-n at most the batch"),
    ),
    ("requests", "cap 1"): (_examples(no_cap_one, "a cap of 2 where it was 1"),),
    ("requests", "ranks above the batch's count (a later page, gaps)"): (
        _examples(ranks_within, "every example's ranks renumbered 1..n"),
    ),
    ("requests", "labels and score shapes mixed in one batch"): (
        _examples(one_label, "each batch of its first candidate's label only"),
    ),
    ("requests", "a reference threshold of 0.0 under a top quality below 0.5"): (
        _examples(threshold_default, "post-process thresholds of 0.0 made 0.5"),
        _kb("explicit_lookups", lookups_at_the_default, "every lookup's threshold of 0.0 made 0.5"),
    ),
    ("requests", "a gate's threshold crossed: top quality just below, at and just above"): (
        _examples(away_from_the_threshold, "each one-candidate example's threshold a quarter from its top"),
    ),
    ("requests", "near-ties of fused scores the dense order contradicts (RRF k 60 and 100)"): (
        _kb("_near_tie_searches", _to(lambda kb: []), "no near-tie hybrid searches"),
    ),
    ("requests", "the long query unfiltered in hybrid mode"): (
        _kb("explicit_searches", no_long_unfiltered_hybrid, "no hybrid search of the long query unfiltered"),
    ),
    ("requests", "long hint lists (40 terms)"): (
        _kb("_LONG_HINTS", _to(3), "lookups' hint lists of 3 words"),
        _examples(short_hints, "post-process examples' hint lists of 3 terms", ("POST_PROCESS_EXAMPLES",)),
        _examples(short_hints, "hint pairs' lists of 3 terms", ("HINT_PAIR_EXAMPLES",)),
    ),
    ("requests", "hints that match nothing, on a good filtered result"): (
        _kb("_MATCHING_NOTHING", _to({}), "the good filtered lookup asks no hints"),
    ),
    ("requests", "hints that match everything"): (
        _feature("quality_gates.feature", _step("L0 hints that every candidate contains"), "no such step"),
    ),
    ("sequences", "a category, then none"): (
        _kb("explicit_searches", unfiltered_first, "every unfiltered search before every filtered one"),
        _kb("explicit_lookups", unfiltered_first, "every unfiltered lookup before every filtered one"),
    ),
    ("sequences", "dense, then hybrid"): (
        _kb("explicit_searches", hybrid_first, "every hybrid search before every dense one"),
    ),
    ("sequences", "the same request twice"): (
        _all(
            _kb("_twice", _to(lambda requests: []), "no repeated request"),
            _kb(
                "one_field_pairs", _to(lambda base, variants: []), "no one-field pairs (they repeat the base)"
            ),
        ),
    ),
    ("sequences", "requests that differ in one field, in both orders, every field"): (
        _kb(
            "one_field_pairs",
            _to(lambda base, variants: [base, *variants]),
            "each variant once after the base",
        ),
        Deletion("no post-process or normalizer pairs", without_pairs),
    ),
    ("sequences", "a retry low quality too, whose best chunk the filtered attempt holds"): (
        _kb("_blank_near_a_category", beside_the_nearest, "the low-quality lookup in another category"),
    ),
    ("labels", "every canonical and legacy spelling"): (
        _feature("score_labels.feature", lambda line: "| rrf_fused " in line, "no rrf_fused row"),
    ),
}
"""For each class a run draws: its deletions from the generator, one per place it is drawn from."""


def test_every_drawn_class_has_a_deletion() -> None:
    drawn = {(c.dimension, c.name) for c in INPUT_MODEL if c.drawing != "not drawn"}
    assert not drawn - set(DELETIONS), f"classes without a deletion: {sorted(drawn - set(DELETIONS))}"
    assert not set(DELETIONS) - drawn, f"deletions of no drawn class: {sorted(set(DELETIONS) - drawn)}"


def _drawing_seeds(c: InputClass, runs: list[Drawn]) -> list[int]:
    """The seeds whose runs draw the class as the generator stands: each of DELETION_SEEDS for an explicit
    class, the ones of SEEDS that do for a generated class."""
    assert c.probe is not None
    if c.drawing == "explicit":
        missing = [s for s in DELETION_SEEDS if not c.probe(Drawn.of(s))]
        assert not missing, f"{c.name!r} is not drawn by seeds {missing}, before any deletion"
        return list(DELETION_SEEDS)
    seeds = [d.seed for d in runs if c.probe(d)]
    assert seeds, f"{c.name!r} is drawn by none of SEEDS, before any deletion"
    return seeds


def _without_the_hostile_part(mp: pytest.MonkeyPatch) -> None:
    """The hostile catalogue's chunks and requests draw many of these classes too, every run, on purpose
    (docs/hostile-values.md; its own matrix test deletes its classes): a deletion here is of the
    generator's own drawing, so the hostile part is taken out first."""
    mp.setattr(_knowledge_base, "hostile_chunks", lambda *a, **k: [])
    mp.setattr(_knowledge_base, "tie_pairs", lambda *a, **k: (None, []))
    mp.setattr(_explicit_requests, "hostile_searches", lambda *a, **k: [])
    mp.setattr(_explicit_requests, "hostile_lookups", lambda *a, **k: [])


@pytest.mark.parametrize("key", DELETIONS, ids=": ".join)
def test_deleting_a_class_from_the_generator_fails_its_probe(
    runs: list[Drawn], tmp_path: Path, key: tuple[str, str]
) -> None:
    (c,) = [c for c in INPUT_MODEL if (c.dimension, c.name) == key]
    assert c.probe is not None
    seeds = _drawing_seeds(c, runs)
    for deletion in DELETIONS[key]:
        with pytest.MonkeyPatch.context() as mp:
            _without_the_hostile_part(mp)
            deletion.apply(mp, tmp_path)
            still = [s for s in seeds if c.probe(Drawn.of(s))]
        assert not still, f"{key}: with {deletion.what}, the probe still finds it in seeds {still}"

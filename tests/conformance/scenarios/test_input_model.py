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

import numpy as np
import pytest

from conformance.corpus import _explicit_requests, _knowledge_base
from conformance.judging._spec_model import canonical
from conformance.scenarios import _explicit, _input_model
from conformance.scenarios._input_model import FAMILIES, INPUT_MODEL, Drawn, InputClass, render_table

ROOT = Path(__file__).resolve().parents[3]
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


# -- what a deletion changes -----------------------------------------------------------------------------


def _kinds_without(test: Callable[[str], bool]) -> Callable[[Any], Any]:
    """The category kinds without the values ``test`` picks (a kind left empty goes)."""
    return lambda kinds: tuple(k for k in (tuple(v for v in kind if not test(v)) for kind in kinds) if k)


def _latin(word: str) -> bool:
    return all(not ch.isalpha() or ord(ch) < 0x250 for ch in word)


def _emoji(word: str) -> bool:
    return any(ord(ch) >= 0x1F300 for ch in word)


def _prefix_of_a_category(absent: tuple[str, ...]) -> tuple[str, ...]:
    values = [v for kind in _knowledge_base._CATEGORY_KINDS for v in kind]
    return tuple(a for a in absent if not any(v != a and v.startswith(a) for v in values))


def _keys_apart(e: dict[str, Any]) -> dict[str, Any]:
    """Each batch without the candidates whose concatenated docId and chunkIndex an earlier one has."""
    seen: set[str] = set()
    kept = []
    for c in e["batch"]:
        if f"{c.doc_id}{c.chunk_index}" not in seen:
            seen.add(f"{c.doc_id}{c.chunk_index}")
            kept.append(c)
    return {**e, "batch": tuple(kept)}


def _no_separator(e: dict[str, Any]) -> dict[str, Any]:
    return {
        **e,
        "batch": tuple(c.model_copy(update={"doc_id": c.doc_id.replace("#", "-")}) for c in e["batch"]),
    }


def _one_category_per_document(e: dict[str, Any]) -> dict[str, Any]:
    first: dict[str, str | None] = {}
    for c in e["batch"]:
        first.setdefault(c.doc_id, c.category)
    return {**e, "batch": tuple(c.model_copy(update={"category": first[c.doc_id]}) for c in e["batch"])}


def _return_n_within(e: dict[str, Any]) -> dict[str, Any]:
    return_n = min(e["config"].return_n, len(e["batch"]))
    return {**e, "config": e["config"].model_copy(update={"return_n": return_n})}


def _no_cap_one(e: dict[str, Any]) -> dict[str, Any]:
    cap = max(2, e["config"].max_chunks_per_document)
    return {**e, "config": e["config"].model_copy(update={"max_chunks_per_document": cap})}


def _ranks_within(e: dict[str, Any]) -> dict[str, Any]:
    """Every example batch renumbered 1..n in its rank order (ties kept): no rank past the count."""
    distinct = sorted({c.original_rank for c in e["batch"]})
    number = {rank: i for i, rank in enumerate(distinct, start=1)}
    batch = tuple(c.model_copy(update={"original_rank": number[c.original_rank]}) for c in e["batch"])
    return {**e, "batch": batch}


def _short_hints(e: dict[str, Any]) -> dict[str, Any]:
    """Every hint list of the example cut to 3 terms."""
    hints = {k: v for k, v in e.items() if k in ("hints", "first", "second")}
    short = {
        k: h.model_copy(update={"keywords": h.keywords[:3], "entities": h.entities[:3]})
        for k, h in hints.items()
    }
    return {**e, **short}


def _hybrid_first(searches: Callable[..., list[dict[str, object]]]) -> Callable[..., list[dict[str, object]]]:
    return lambda kb: sorted(searches(kb), key=lambda r: r["mode"] == "dense")


def _unfiltered_first(
    asked: Callable[..., list[dict[str, object]]],
) -> Callable[..., list[dict[str, object]]]:
    return lambda kb: sorted(asked(kb), key=lambda r: r["category"] is not None)


def _beside_the_nearest(blank_near: Callable[..., Any]) -> Callable[..., Any]:
    """The low-quality lookup filtered by another category than its nearest chunk's."""

    def other(kb: Any, hybrid: Any) -> Any:
        query, nearest = blank_near(kb, hybrid)
        return query, next(c for c in kb.chunks if c.category not in (None, nearest.category))

    return other


def _between_two_chunks(chunks: Any) -> np.ndarray:
    """The first tie between the duplicate and doc1's first chunk: no chunk at distance zero."""
    v = np.asarray(chunks[0].vector) + np.asarray(chunks[1].vector)
    return v / np.linalg.norm(v)


def _one_label(e: dict[str, Any]) -> dict[str, Any]:
    """Each batch without the candidates whose canonical label is not its first candidate's."""
    batch = e["batch"]
    first = canonical(batch[0].score_label) if batch else None
    return {**e, "batch": tuple(c for c in batch if canonical(c.score_label) == first)}


def _threshold_default(e: dict[str, Any]) -> dict[str, Any]:
    """A reference threshold of 0.0 made the default 0.5 (and the highly-relevant one at least that)."""
    config = e["config"]
    if config.reference_threshold != 0.0:
        return e
    update = {
        "reference_threshold": 0.5,
        "highly_relevant_threshold": max(0.5, config.highly_relevant_threshold),
    }
    return {**e, "config": config.model_copy(update=update)}


def _no_zero_distance(e: dict[str, Any]) -> dict[str, Any]:
    batch = tuple(c.model_copy(update={"score": 0.05}) if c.score == 0.0 else c for c in e["batch"])
    return {**e, "batch": batch}


def _away_from_the_threshold(e: dict[str, Any]) -> dict[str, Any]:
    """A one-candidate example's threshold moved a quarter away from its top quality: no gate crossed."""
    config = e["config"]
    if len(e["batch"]) != 1 or e["batch"][0].score is None:
        return e
    top = max(0.0, 1.0 - min(e["batch"][0].score, config.max_l2_distance) / config.max_l2_distance)
    moved = top - 0.25 if top >= 0.25 else top + 0.25
    return {
        **e,
        "config": config.model_copy(update={"reference_threshold": moved, "highly_relevant_threshold": 1.0}),
    }


def _without_pairs(mp: pytest.MonkeyPatch, _: Path) -> None:
    """The post-process examples without the one-field pairs, and no normalizer examples."""
    pairs = list(_explicit.POST_PROCESS_PAIRS)
    mp.setattr(
        _explicit,
        "POST_PROCESS_EXAMPLES",
        tuple(e for e in _explicit.POST_PROCESS_EXAMPLES if e not in pairs),
    )
    mp.setattr(_explicit, "QUALITY_EXAMPLES", ())


def _quality_without_zero(mp: pytest.MonkeyPatch, _: Path) -> None:
    examples = [e["request"] for e in _explicit.QUALITY_EXAMPLES]
    kept = [r.model_copy(update={"score": 0.05}) if r.score == 0.0 else r for r in examples]
    mp.setattr(_explicit, "QUALITY_EXAMPLES", tuple({"request": r} for r in kept))


def _lookups_at_the_default(lookups: Callable[..., list[dict[str, object]]]) -> Callable[..., Any]:
    def default(r: dict[str, Any]) -> dict[str, Any]:
        config = dict(r.get("config") or {})
        if config.get("reference_threshold") == 0.0:
            config["reference_threshold"] = 0.5
            config["highly_relevant_threshold"] = max(0.5, config.get("highly_relevant_threshold", 0.75))
        return {**r, "config": config}

    return lambda kb: [default(r) for r in lookups(kb)]


def _no_long_unfiltered_hybrid(searches: Callable[..., list[dict[str, object]]]) -> Callable[..., Any]:
    def long(r: dict[str, object]) -> bool:
        return r["mode"] == "hybrid" and r["category"] is None and len(str(r["query_text"]).split()) >= 40

    return lambda kb: [r for r in searches(kb) if not long(r)]


_SINGLE_VECTORS = _kb("_duplicate", _to(list), "no vector held by two chunks")
_LATIN_KEYWORDS = _kb("_KEYWORD_SCRIPT", _to("latin"), "every keyword in Latin letters")

DELETIONS: dict[tuple[str, str], tuple[Deletion, ...]] = {
    ("ids", "collide when concatenated (doc1/11, doc11/1)"): (
        _kb("_COLLIDING_DOC", _to("doc-11"), "doc11 is doc-11"),
        _examples(_keys_apart, "no two candidates of a batch whose keys collide"),
    ),
    ("ids", "contain the separator `#`"): (_examples(_no_separator, "`#` in no docId"),),
    ("ids", "other scripts"): (
        _kb("_DOC_IDS", lambda ids: tuple(filter(str.isascii, ids)), "ASCII id templates"),
    ),
    ("ids", "long (36 characters or more)"): (
        _kb("_DOC_IDS", lambda ids: tuple(t for t in ids if t != "{uuid}"), "no UUID ids"),
    ),
    ("categories", "a quote"): (
        _kb("_CATEGORY_KINDS", _kinds_without(lambda v: "'" in v or '"' in v), "no quote"),
    ),
    ("categories", "a backslash"): (
        _kb("_CATEGORY_KINDS", _kinds_without(lambda v: "\\" in v), "no backslash"),
    ),
    ("categories", "a newline"): (_kb("_CATEGORY_KINDS", _kinds_without(lambda v: "\n" in v), "no newline"),),
    ("categories", "a tab"): (_kb("_CATEGORY_KINDS", _kinds_without(lambda v: "\t" in v), "no tab"),),
    ("categories", "`%` and `_`"): (
        _kb("_CATEGORY_KINDS", _kinds_without(lambda v: "%" in v or "_" in v), "no % or _"),
    ),
    ("categories", "leading and trailing space"): (
        _kb("_CATEGORY_KINDS", _kinds_without(lambda v: v != v.strip()), "no padded category"),
    ),
    ("categories", "a prefix of another"): (
        _kb("_ABSENT", _prefix_of_a_category, "no absent category is a prefix of a category"),
    ),
    ("categories", "a category's identifier twin (punctuation made `_`)"): (
        _kb("_TWINNED_KIND", _to(None), "no twin asked"),
    ),
    ("categories", "other scripts"): (
        _kb("_CATEGORY_KINDS", _kinds_without(lambda v: not v.isascii()), "ASCII"),
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
        _all(_kb("_QUERY_NOISE", lambda words: tuple(filter(_latin, words)), "Latin noise"), _LATIN_KEYWORDS),
    ),
    ("texts and queries", "emoji"): (
        _kb("_OTHER_SCRIPTS", lambda words: tuple(w for w in words if not _emoji(w)), "no emoji in texts"),
    ),
    ("texts and queries", "mixed scripts"): (
        _all(
            _kb("_OTHER_SCRIPTS", lambda words: tuple(filter(_latin, words)), "Latin words"), _LATIN_KEYWORDS
        ),
    ),
    ("vectors", "exact ties"): (_SINGLE_VECTORS,),
    ("vectors", "near ties (equal in reals, float32 apart)"): (
        _kb("_NEAR_TIES", _to(0), "no query between two"),
    ),
    ("vectors", "duplicates"): (_SINGLE_VECTORS,),
    ("vectors", "zero distance handed in (a dense score of 0.0)"): (
        Deletion("no normalizer example of distance 0.0", _quality_without_zero),
        _examples(_no_zero_distance, "no candidate of distance 0.0"),
    ),
    ("vectors", "zero distance"): (
        _kb("_at_the_duplicate", _to(_between_two_chunks), "the first tie between two chunks, on none"),
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
        _examples(_one_category_per_document, "each document's candidates in its first one's category"),
    ),
    ("corpora", "a category of one chunk"): (_kb("_TINY_CHUNKS", _to(2), "the tiny category of two chunks"),),
    ("requests", "k larger than the corpus"): (
        _kb("_PAST_THE_KB", _to(0), "k = the generated chunks' count"),
    ),
    ("requests", "return-n above the candidates"): (
        _examples(_return_n_within, "return-n at most the batch"),
    ),
    ("requests", "cap 1"): (_examples(_no_cap_one, "a cap of 2 where it was 1"),),
    ("requests", "ranks above the batch's count (a later page, gaps)"): (
        _examples(_ranks_within, "every example's ranks renumbered 1..n"),
    ),
    ("requests", "labels and score shapes mixed in one batch"): (
        _examples(_one_label, "each batch of its first candidate's label only"),
    ),
    ("requests", "a reference threshold of 0.0 under a top quality below 0.5"): (
        _examples(_threshold_default, "post-process thresholds of 0.0 made 0.5"),
        _kb("explicit_lookups", _lookups_at_the_default, "every lookup's threshold of 0.0 made 0.5"),
    ),
    ("requests", "a gate's threshold crossed: top quality just below, at and just above"): (
        _examples(_away_from_the_threshold, "each one-candidate example's threshold a quarter from its top"),
    ),
    ("requests", "the long query unfiltered in hybrid mode"): (
        _kb("explicit_searches", _no_long_unfiltered_hybrid, "no hybrid search of the long query unfiltered"),
    ),
    ("requests", "long hint lists (40 terms)"): (
        _kb("_LONG_HINTS", _to(3), "lookups' hint lists of 3 words"),
        _examples(_short_hints, "post-process examples' hint lists of 3 terms", ("POST_PROCESS_EXAMPLES",)),
        _examples(_short_hints, "hint pairs' lists of 3 terms", ("HINT_PAIR_EXAMPLES",)),
    ),
    ("requests", "hints that match nothing, on a good filtered result"): (
        _kb("_MATCHING_NOTHING", _to({}), "the good filtered lookup asks no hints"),
    ),
    ("requests", "hints that match everything"): (
        _feature("quality_gates.feature", _step("L0 hints that every candidate contains"), "no such step"),
    ),
    ("sequences", "a category, then none"): (
        _kb("explicit_searches", _unfiltered_first, "every unfiltered search before every filtered one"),
        _kb("explicit_lookups", _unfiltered_first, "every unfiltered lookup before every filtered one"),
    ),
    ("sequences", "dense, then hybrid"): (
        _kb("explicit_searches", _hybrid_first, "every hybrid search before every dense one"),
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
        Deletion("no post-process or normalizer pairs", _without_pairs),
    ),
    ("sequences", "a retry low quality too, whose best chunk the filtered attempt holds"): (
        _kb("_blank_near_a_category", _beside_the_nearest, "the low-quality lookup in another category"),
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


@pytest.mark.parametrize("key", DELETIONS, ids=": ".join)
def test_deleting_a_class_from_the_generator_fails_its_probe(
    runs: list[Drawn], tmp_path: Path, key: tuple[str, str]
) -> None:
    (c,) = [c for c in INPUT_MODEL if (c.dimension, c.name) == key]
    assert c.probe is not None
    seeds = _drawing_seeds(c, runs)
    for deletion in DELETIONS[key]:
        with pytest.MonkeyPatch.context() as mp:
            deletion.apply(mp, tmp_path)
            still = [s for s in seeds if c.probe(Drawn.of(s))]
        assert not still, f"{key}: with {deletion.what}, the probe still finds it in seeds {still}"

"""The input model: every input dimension a real knowledge base and a real client have, its classes, and
where a run draws each one, as data the kit checks.

Each :class:`InputClass` says which scenario families draw it and whether every run does (``explicit``:
the run's explicit inputs hold it, whatever the seed) or some runs do (``generated``: the seed decides;
the page gives the share of seeds measured) or none (``not drawn``, with the reason). Its ``probe`` looks
at what one run asks (:class:`Drawn`) and says whether the class is there. ``features/spec/input-model.md``
holds the table :func:`render_table` writes, and ``tests/unit/conformance/scenarios/test_input_model.py``
fails when a class is not drawn where the table says: delete a class from the generator and its probe
finds nothing.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from itertools import pairwise
from pathlib import Path
from typing import Any, Literal

from ..boundary._protocol import (
    LookupRequest,
    QualityRequest,
    SearchRequest,
    WireCandidate,
)
from ..corpus import _explicit_requests
from ..corpus._knowledge_base import KnowledgeBase, identifier_twin
from ..corpus._scenario_corpus import ScenarioCorpus, build_corpus
from . import _explicit
from ._input_probes import (
    gates_crossed,
    long_unfiltered_hybrid,
    mixed_labels,
    one_field_pairs_asked,
    zero_distance_handed,
    zero_threshold,
)
from ._strategies import LABELS

__all__ = ["FAMILIES", "INPUT_MODEL", "Drawn", "InputClass", "render_table"]

Drawing = Literal["explicit", "generated", "not drawn"]
_FEATURES = Path(__file__).resolve().parents[2] / "features"

FAMILIES: dict[str, tuple[str, ...]] = {
    "kb-search": (
        "prop-search-follows-its-mode-on-a-real-knowledge-base",
        "prop-hybrid-scores-are-never-dense-l2-on-a-real-knowledge-base",
        "prop-dense-mode-reads-dense-ann-only-on-a-real-knowledge-base",
    ),
    "kb-lookup": ("prop-lookup-on-a-real-knowledge-base",),
    "post-process": (
        "prop-accepted-order-ascending-for-any-candidates-and-hints",
        "prop-caps-hold-and-keep-the-best-ranks",
        "prop-gates-follow-the-top-qualityscore-and-thresholds",
        "prop-l0-hints-change-nothing-but-hit-reasons",
    ),
    "labels": (
        "legacy-aliases-canonicalize",
        "legacy-aliases-canonicalize-label-api",
        "canonical-labels-stay-canonical-label-api",
    ),
    "gates": ("precise-does-not-require-hint-support", "l0-hints-never-change-the-gates"),
    "quality": ("prop-quality-within-0-and-1-for-any-input",),
}
"""Scenario families, by the ``@id`` of their scenarios (the test checks each id exists)."""


@dataclass(frozen=True)
class Drawn:
    """What one run (one seed) asks: its corpus and knowledge base, and its explicit requests."""

    seed: int
    corpus: ScenarioCorpus = field(repr=False)

    @classmethod
    def of(cls, seed: int) -> Drawn:
        return cls(seed, build_corpus(seed=seed))

    @property
    def kb(self) -> KnowledgeBase:
        assert self.corpus.knowledge_base is not None
        return self.corpus.knowledge_base

    # The generator's functions and examples are read through their modules, when asked: a test that
    # takes a class out of the generator (monkeypatching one of them) sees its probe find nothing.
    @cached_property
    def searches(self) -> list[SearchRequest]:
        return [SearchRequest(**e) for e in _explicit_requests.explicit_searches(self.kb)]  # type: ignore[arg-type]

    @cached_property
    def lookups(self) -> list[LookupRequest]:
        return [LookupRequest(**e) for e in _explicit_requests.explicit_lookups(self.kb)]  # type: ignore[arg-type]

    @property
    def post_process(self) -> tuple[dict[str, Any], ...]:
        return _explicit.POST_PROCESS_EXAMPLES

    @property
    def hint_pairs(self) -> tuple[dict[str, Any], ...]:
        return _explicit.HINT_PAIR_EXAMPLES

    @property
    def quality(self) -> list[QualityRequest]:
        return [e["request"] for e in _explicit.QUALITY_EXAMPLES]

    @property
    def batches(self) -> list[tuple[WireCandidate, ...]]:
        return [e["batch"] for e in (*self.post_process, *self.hint_pairs)]

    @property
    def filtered(self) -> set[str]:
        """Every category an explicit search or lookup filters by."""
        asked = [r.category for r in (*self.searches, *self.lookups)]
        return {c for c in asked if c is not None}

    @property
    def doc_ids(self) -> set[str]:
        return {c.doc_id for c in self.corpus.corpus.chunks}


Probe = Callable[[Drawn], bool]


@dataclass(frozen=True)
class InputClass:
    dimension: str
    name: str
    families: tuple[str, ...]
    drawing: Drawing
    probe: Probe | None = None  # None only for "not drawn"
    why: str = ""  # for "not drawn": the reason; otherwise where it comes from


def _keys_collide(keys: Sequence[tuple[str, int]]) -> bool:
    joined = Counter(f"{d}{i}" for d, i in set(keys))
    return any(n > 1 for n in joined.values())


def _kb_keys(d: Drawn) -> list[tuple[str, int]]:
    return [(c.doc_id, c.chunk_index) for c in d.kb.chunks]


def _batch_keys(d: Drawn) -> list[list[tuple[str, int]]]:
    return [[(c.doc_id, c.chunk_index) for c in b] for b in d.batches]


def _filtered_any(d: Drawn, test: Callable[[str], bool]) -> bool:
    """A category chunks carry, filtered by: a filter that mangles it loses that category's chunks."""
    return any(test(c) for c in d.filtered & set(d.kb.categories))


def _category_then_none(a: Any, b: Any) -> bool:
    """A filtered request right before an unfiltered one: state a filter leaves behind shows."""
    return a.category is not None and b.category is None


def _twin_filtered(d: Drawn) -> bool:
    """A filtered value no chunk carries that is a category with its punctuation made ``_``."""
    absent = d.filtered - set(d.kb.categories)
    return any(identifier_twin(c) in absent for c in d.kb.categories)


def _prefix(d: Drawn) -> bool:
    """A filtered value that is a proper prefix of a category chunks carry."""
    return any(a != b and b.startswith(a) for a in d.filtered for b in d.kb.categories)


def _texts(d: Drawn) -> list[str]:
    return [c.text for c in d.kb.chunks]


def _queries(d: Drawn) -> list[str]:
    return [r.query_text for r in (*d.searches, *d.lookups)]


def _scripts(text: str) -> set[str]:
    out = set()
    for ch in text:
        if ch.isalpha():
            out.add("latin" if ch.isascii() or "\u00c0" <= ch <= "\u024f" else f"u{ord(ch) >> 8}")
    return out


def _emoji(text: str) -> bool:
    return any(ord(ch) >= 0x1F300 for ch in text)


def _categories_of_doc(d: Drawn) -> bool:
    cats: dict[str, set[str | None]] = {}
    for c in d.kb.chunks:
        cats.setdefault(c.doc_id, set()).add(c.category)
    return any(len(v) > 1 for v in cats.values())


def _chunks_per_doc(d: Drawn) -> Counter[str]:
    return Counter(c.doc_id for c in d.kb.chunks)


def _category_sizes(d: Drawn) -> Counter[str | None]:
    return Counter(c.category for c in d.kb.chunks)


def _duplicate_vectors(d: Drawn) -> bool:
    seen: dict[tuple[float, ...], str] = {}
    for c in d.kb.chunks:
        if c.vector in seen and seen[c.vector] != c.doc_id:
            return True
        seen.setdefault(c.vector, c.doc_id)
    return False


def _zero_distance(d: Drawn) -> bool:
    vectors = {c.vector for c in d.corpus.corpus.chunks}
    return any(r.mode == "dense" and any(_close(r.query_vector, v) for v in vectors) for r in d.searches)


def _distance(a: Sequence[float], b: Sequence[float]) -> float:
    return sum((x - y) ** 2 for x, y in zip(a, b, strict=True))


def _close(a: Sequence[float], b: Sequence[float]) -> bool:
    return _distance(a, b) < 1e-12


def _near_ties(d: Drawn) -> bool:
    return sum(1 for q in d.kb.queries if q.shape == "tie") >= 2


def _hints(d: Drawn) -> list[Any]:
    return [r.hints for r in d.lookups]


def _words(h: Any) -> tuple[str, ...]:
    return (*h.keywords, *h.entities, *([h.domain] if h.domain else []))


def _long_example_hints(d: Drawn) -> bool:
    """A post-process example and a hint pair (either side) with 40 hint terms: the properties over
    examples and the no-boost property each draw them."""
    pairs = [e[side] for e in d.hint_pairs for side in ("first", "second")]
    return any(len(_words(e["hints"])) >= 40 for e in d.post_process) and any(
        len(_words(h)) >= 40 for h in pairs
    )


def _hints_match_nothing(d: Drawn) -> bool:
    texts = " ".join(_texts(d)).casefold()
    return any(_words(h) and not any(w.casefold() in texts for w in _words(h)) for h in _hints(d))


def _sequence(asked: Sequence[Any], test: Callable[[Any, Any], bool]) -> bool:
    """Two requests one after the other in one family's list: the last search and the first lookup are
    asked by different scenarios, never in a row."""
    return any(test(a, b) for a, b in pairwise(asked))


def _fused_near_ties(d: Drawn) -> bool:
    """Hybrid keyword searches at the largest k, unfiltered, with RRF k 60 and 100 (both asked)."""
    asked = {
        r.rrf_k
        for r in d.searches
        if r.mode == "hybrid" and r.category is None and r.query_text.strip() and r.k >= d.kb.max_k
    }
    return {60, 100} <= asked


def _twice(d: Drawn) -> bool:
    asked = [r.model_dump_json() for r in (*d.searches, *d.lookups)]
    return len(asked) != len(set(asked))


def _retry_overlaps(d: Drawn) -> bool:
    """A lookup low quality filtered and unfiltered (thresholds 1) whose corpus-wide nearest chunk is in
    its category: a retry that skips what the filtered attempt walked loses the retry's best chunk."""
    chunks = d.corpus.corpus.chunks
    for r in d.lookups:
        if r.category is None or r.config.reference_threshold != 1.0:
            continue
        nearest = min(chunks, key=lambda c: _distance(c.vector, r.query_vector))
        if nearest.category == r.category:
            return True
    return False


_STEP_KEYWORDS = ("Given ", "When ", "Then ", "And ", "But ")


def _feature_step(name: str, text: str) -> Probe:
    """A step of the feature holds ``text``: a scenario draws it (the feature's description does not)."""

    def probe(d: Drawn) -> bool:
        lines = (_FEATURES / name).read_text(encoding="utf-8").splitlines()
        return any(line.strip().startswith(_STEP_KEYWORDS) and text in line for line in lines)

    return probe


def _labels(d: Drawn) -> bool:
    text = (_FEATURES / "score_labels.feature").read_text(encoding="utf-8")
    spellings = {label for labels in LABELS.values() for label in labels}
    return all(f"| {label} " in text for label in spellings)


_E, _G, _N = "explicit", "generated", "not drawn"
_KB = ("kb-search", "kb-lookup")
_PP = ("post-process",)

INPUT_MODEL: tuple[InputClass, ...] = (
    # -- ids ---------------------------------------------------------------------------------------
    InputClass("ids", "collide when concatenated (doc1/11, doc11/1)", (*_KB, *_PP), _E,
               lambda d: _keys_collide(_kb_keys(d)) and any(map(_keys_collide, _batch_keys(d)))),
    InputClass("ids", "contain the separator `#`", _PP, _E,
               lambda d: any("#" in doc for keys in _batch_keys(d) for doc, _ in keys),
               "post-process examples; the knowledge base's page#n-intro ids are generated too"),
    InputClass("ids", "other scripts", _KB, _G,
               lambda d: any(not doc.isascii() for doc in d.doc_ids)),
    InputClass("ids", "long (36 characters or more)", _KB, _G,
               lambda d: any(len(doc) >= 36 for doc in d.doc_ids), "UUIDs"),
    # -- category values -----------------------------------------------------------------------------
    InputClass("categories", "a quote", _KB, _E, lambda d: _filtered_any(d, lambda c: "'" in c or '"' in c)),
    InputClass("categories", "a backslash", _KB, _E, lambda d: _filtered_any(d, lambda c: "\\" in c)),
    InputClass("categories", "a newline", _KB, _G, lambda d: _filtered_any(d, lambda c: "\n" in c)),
    InputClass("categories", "a tab", _KB, _G, lambda d: _filtered_any(d, lambda c: "\t" in c)),
    InputClass("categories", "`%` and `_`", _KB, _G,
               lambda d: _filtered_any(d, lambda c: "%" in c and "_" in c)),
    InputClass("categories", "leading and trailing space", _KB, _E,
               lambda d: _filtered_any(d, lambda c: c != c.strip()),
               "a category of its own kind; a filter that trims it finds none of its chunks"),
    InputClass("categories", "empty", (), _N,
               why="an empty category is how engines without nullable fields store none (readings 21); "
               "the protocol keeps it apart only as null"),
    InputClass("categories", "a prefix of another", _KB, _E, _prefix,
               "the absent `C:\\shares` beside `C:\\shares\\kb`; Customer, 产品 when drawn"),
    InputClass("categories", "a category's identifier twin (punctuation made `_`)", ("kb-search",), _E,
               _twin_filtered,
               "`tier_1_escalations` beside `tier-1/escalations`: names built from categories collide"),
    InputClass("categories", "other scripts", _KB, _E, lambda d: _filtered_any(d, lambda c: not c.isascii())),
    InputClass("categories", "absent (no chunk has it; chunks with none)", _KB, _E,
               lambda d: d.kb.absent_categories[0] in d.filtered and None in _category_sizes(d)),
    # -- texts and queries ---------------------------------------------------------------------------
    InputClass("texts and queries", "blank", _KB, _E, lambda d: any(not q.strip() for q in _queries(d))),
    InputClass("texts and queries", "punctuation only", _KB, _E,
               lambda d: any(q.strip() and not any(ch.isalnum() for ch in q) for q in _queries(d))),
    InputClass("texts and queries", "very long (40 words or more)", _KB, _E,
               lambda d: any(len(q.split()) >= 40 for q in _queries(d))),
    InputClass("texts and queries", "other scripts", _KB, _E,
               lambda d: any(_scripts(q) - {"latin"} for q in _queries(d))),
    InputClass("texts and queries", "emoji", _KB, _G, lambda d: any(map(_emoji, _texts(d))),
               "texts; queries as drawn noise"),
    InputClass("texts and queries", "mixed scripts", _KB, _G,
               lambda d: any(len(_scripts(t)) > 1 for t in _texts(d))),
    # -- vectors ---------------------------------------------------------------------------------------
    InputClass("vectors", "exact ties", ("kb-search",), _E, _duplicate_vectors,
               "one vector held by chunks of two documents; dense searches are watched at the engine"),
    InputClass("vectors", "near ties (equal in reals, float32 apart)", ("kb-search",), _G, _near_ties),
    InputClass("vectors", "duplicates", _KB, _E, _duplicate_vectors),
    InputClass("vectors", "zero distance", ("kb-search",), _E, _zero_distance),
    InputClass("vectors", "zero distance handed in (a dense score of 0.0)", ("quality", *_PP), _E,
               zero_distance_handed, "quality 1.0; `score or None` makes it 0"),
    # -- corpora ---------------------------------------------------------------------------------------
    InputClass("corpora", "a document of one chunk", _KB, _E, lambda d: 1 in _chunks_per_doc(d).values()),
    InputClass("corpora", "many chunks per document (12)", _KB, _E,
               lambda d: max(_chunks_per_doc(d).values()) >= 12),
    InputClass("corpora", "a document over several categories", (*_KB, *_PP), _E,
               lambda d: _categories_of_doc(d)
               and any(len({c.category for c in b if c.doc_id == b[0].doc_id}) > 1 for b in d.batches)),
    InputClass("corpora", "a category of one chunk", _KB, _E,
               lambda d: any(n == 1 for c, n in _category_sizes(d).items() if c is not None)),
    # -- requests --------------------------------------------------------------------------------------
    InputClass("requests", "k larger than the corpus", ("kb-search",), _E,
               lambda d: any(r.k > len(d.corpus.corpus.chunks) for r in d.searches)),
    InputClass("requests", "return-n above the candidates", _PP, _E,
               lambda d: any(len(e["batch"]) < e["config"].return_n for e in d.post_process)),
    InputClass("requests", "cap 1", _PP, _E,
               lambda d: any(e["config"].max_chunks_per_document == 1 for e in d.post_process)),
    InputClass("requests", "long hint lists (40 terms)", (*_KB, *_PP), _E,
               lambda d: any(len(_words(h)) >= 40 for h in _hints(d)) and _long_example_hints(d)),
    InputClass("requests", "hints that match nothing, on a good filtered result", ("kb-lookup",), _E,
               lambda d: _hints_match_nothing(d)
               and any(r.category and r.config.reference_threshold == 0.0 for r in d.lookups)),
    InputClass("requests", "hints that match everything", ("gates",), _E,
               _feature_step("quality_gates.feature", "L0 hints that every candidate contains")),
    InputClass("requests", "ranks above the batch's count (a later page, gaps)", _PP, _E,
               lambda d: any(max(c.original_rank for c in b) > len(b) + 1 for b in d.batches),
               "readings 22"),
    InputClass("requests", "labels and score shapes mixed in one batch", _PP, _E, mixed_labels,
               "dense and hybrid candidates (and aliases), L2 distances beside fused scores"),
    InputClass("requests", "a reference threshold of 0.0 under a top quality below 0.5", ("kb-lookup", *_PP),
               _E, zero_threshold, "`threshold or 0.5` changes the answer here only"),
    InputClass("requests", "a gate's threshold crossed: top quality just below, at and just above", _PP,
               _E, gates_crossed, "2**-10 either side; at it, readings 11"),
    InputClass("requests", "the long query unfiltered in hybrid mode", ("kb-search",), _E,
               long_unfiltered_hybrid, "its keyword comes after forty words no text holds"),
    InputClass("requests", "near-ties of fused scores the dense order contradicts (RRF k 60 and 100)",
               ("kb-search",), _E, _fused_near_ties,
               "keyword text, another chunk's vector, the largest k (F38)"),
    # -- sequences -------------------------------------------------------------------------------------
    InputClass("sequences", "a category, then none", _KB, _E,
               lambda d: all(_sequence(asked, _category_then_none) for asked in (d.searches, d.lookups))),
    InputClass("sequences", "dense, then hybrid", ("kb-search",), _E,
               lambda d: _sequence(d.searches, lambda a, b: (a.mode, b.mode) == ("dense", "hybrid"))),
    InputClass("sequences", "the same request twice", _KB, _E, _twice),
    InputClass("sequences", "requests that differ in one field, in both orders, every field",
               (*_KB, *_PP, "quality"), _E, one_field_pairs_asked,
               "after the one prepare; the normalizer's batch size and denseDistance have no pair: no single "
               "answer the spec fixes differs with them alone"),
    InputClass("sequences", "a retry low quality too, whose best chunk the filtered attempt holds",
               ("kb-lookup",), _E, _retry_overlaps,
               "the unfiltered search's best chunk is the filtered attempt's best too"),
    InputClass("sequences", "a second prepare", (), _N,
               why="a run prepares its corpus once; a second prepare is the implementation's state across "
               "runs, which one run cannot see"),
    # -- labels ----------------------------------------------------------------------------------------
    InputClass("labels", "every canonical and legacy spelling", ("labels", *_PP), _E, _labels),
)  # fmt: skip
"""Every class, in the page's order."""


def render_table(shares: dict[str, float] | None = None) -> str:
    """The page's table; ``shares``: the measured share of seeds drawing each generated class."""
    lines = [
        "| dimension | class | families | every run? | where |",
        "|---|---|---|---|---|",
    ]
    for c in INPUT_MODEL:
        drawn = c.drawing
        if c.drawing == "generated" and shares is not None:
            drawn = f"generated ({shares[c.name]:.0%} of seeds)"
        families = ", ".join(c.families) or "none"
        lines.append(f"| {c.dimension} | {c.name} | {families} | {drawn} | {c.why} |")
    return "\n".join(lines)

"""Hypothesis strategies for the property scenarios: wire values any conforming implementation must accept.

Inputs stay inside what the spec defines, so a property never judges a reading the spec leaves open
(features/spec/readings.md):

- distances are finite and non-negative, or a hair below 0 (float32 rounding of an exact match), and
  ``maxL2Distance`` is positive, ranks lie within their batch;
- a hybrid batch carries ``denseDistance`` on every hit, on some or on none (with some only, qualities
  are unspecified, 5: the model then checks order, structure and gates, not the numbers);
- equal ``originalRank`` values may occur (any stable order among ties conforms, 10);
- labels are the two canonical ones and exactly the three legacy aliases (8);
- texts and hints come from one small vocabulary, so L0 hints often match by contains.
"""

from __future__ import annotations

from typing import Literal

from hypothesis import strategies as st

from ..boundary._protocol import (
    Hints,
    LookupRequest,
    PostProcessConfig,
    QualityRequest,
    SearchRequest,
    WireCandidate,
)
from ..corpus._knowledge_base import KbQuery, KnowledgeBase

# Each canonical label with the legacy aliases that canonicalize to it: the spec model's one table.
from ..judging._spec_model import SPELLINGS as LABELS

__all__ = [
    "LABELS",
    "candidate_batches",
    "configs",
    "hints",
    "kb_hints",
    "kb_lookup_requests",
    "kb_search_requests",
    "quality_requests",
    "renamed",
]

Kind = Literal["dense", "hybrid"]
Distances = Literal["all", "some", "none"]

WORDS = ("refund", "invoice", "warranty", "gateway", "snapshot", "policy", "acme", "billing")
DOC_IDS = ("A", "B", "C", "D", "E")
SOURCE_TYPES = ("faq", "manual", "ticket")
MAX_BATCH = 12


def _floats(low: float, high: float) -> st.SearchStrategy[float]:
    return st.floats(min_value=low, max_value=high, allow_nan=False, allow_infinity=False)


# Engines report squared L2 in float32: a chunk equal to the query can come back a hair below 0.
distances = st.one_of(_floats(0.0, 8.0), _floats(0.0, 8.0), _floats(0.0, 8.0), _floats(-1e-6, -1e-12))
# Fused scores of any magnitude: RRF sums, engine-normalised scores, anything an engine may return.
fused_scores = _floats(0.0, 1000.0)
max_l2_distances = st.sampled_from((2.0, 4.0)) | _floats(0.05, 10.0)


def hints() -> st.SearchStrategy[Hints]:
    """L0 hints over the shared vocabulary: often contained in a candidate's text, often not; up to every
    word at once, so an implementation that boosts only on many matches is seen too."""
    words = st.lists(st.sampled_from(WORDS), max_size=len(WORDS), unique=True).map(tuple)
    return st.builds(
        Hints,
        domain=st.none() | st.sampled_from(WORDS),
        entities=words,
        keywords=words,
        source_type=st.none() | st.sampled_from(SOURCE_TYPES),
    )


_RETURN_N = st.integers(min_value=1, max_value=8)
_CAPS = st.integers(min_value=1, max_value=4)


def configs() -> st.SearchStrategy[PostProcessConfig]:
    """Any valid configuration: thresholds with reference <= highly-relevant, small caps."""

    @st.composite
    def build(draw: st.DrawFn) -> PostProcessConfig:
        reference = draw(_floats(0.0, 1.0))
        highly = draw(_floats(reference, 1.0))
        return PostProcessConfig(
            max_l2_distance=draw(max_l2_distances),
            highly_relevant_threshold=highly,
            reference_threshold=reference,
            return_n=draw(_RETURN_N),
            max_chunks_per_document=draw(_CAPS),
        )

    return build()


# Whole fields drawn in one go where possible: generation, not the adapter, dominates a property's time.
_CHUNKS = tuple((doc, index) for doc in DOC_IDS for index in range(4))
_TEXTS = ("", *WORDS, *(f"{a} {b}" for a in WORDS for b in WORDS if a < b), " ".join(WORDS[:4]))
_SOURCE_TYPES = (None, *SOURCE_TYPES)


# Strategies built once: Hypothesis validates and labels every new strategy object, and building them
# inside a composite for each candidate made generation most of a property's time.
_SCORES: dict[Kind, st.SearchStrategy[float | None]] = {
    "dense": st.none() | distances,
    "hybrid": fused_scores,
}
_PICK_CHUNK = st.sampled_from(_CHUNKS)
_PICK_TEXT = st.sampled_from(_TEXTS)
_PICK_LABEL = {kind: st.sampled_from(labels) for kind, labels in LABELS.items()}
_PICK_SOURCE = st.sampled_from(_SOURCE_TYPES)
_KINDS: st.SearchStrategy[Kind] = st.sampled_from(("dense", "hybrid"))
_SPREADS: st.SearchStrategy[Distances] = st.sampled_from(("all", "some", "none"))
_SIZES = st.integers(min_value=1, max_value=MAX_BATCH)
_RANKS = {
    n: st.lists(st.integers(min_value=1, max_value=n), min_size=n, max_size=n)
    for n in range(1, MAX_BATCH + 1)
}
_DISTINCT_DISTANCES = {
    n: st.lists(distances, min_size=n, max_size=n, unique=True) for n in range(1, MAX_BATCH + 1)
}
_SOME = {n: st.lists(st.booleans(), min_size=n, max_size=n) for n in range(1, MAX_BATCH + 1)}


def _candidate(draw: st.DrawFn, kind: Kind, rank: int) -> WireCandidate:
    score = draw(_SCORES[kind])
    doc_id, chunk_index = draw(_PICK_CHUNK)
    return WireCandidate(
        doc_id=doc_id,
        chunk_index=chunk_index,
        text=draw(_PICK_TEXT),
        original_rank=rank,
        score=score,
        score_label=draw(_PICK_LABEL[kind]),
        raw_score=score,
        source_type=draw(_PICK_SOURCE),
    )


@st.composite
def candidate_batches(
    draw: st.DrawFn, *, kind: Kind | None = None, dense_distance: Distances | None = None
) -> tuple[WireCandidate, ...]:
    """Any batch in any input order: duplicates, shared docIds, tied ranks, one canonical label, dense
    distances that need not follow rank (so a removed candidate may outscore every accepted one).

    ``dense_distance`` (hybrid only): on ``all`` hits, ``some`` or ``none``; ``None`` draws one.
    """
    chosen: Kind = kind if kind is not None else draw(_KINDS)
    spread_over: Distances = "none"
    if chosen == "hybrid":
        spread_over = dense_distance or draw(_SPREADS)
    n = draw(_SIZES)
    ranks = draw(_RANKS[n])
    batch = [_candidate(draw, chosen, rank) for rank in ranks]
    if spread_over != "none":
        # Distinct distances: Hypothesis favours repeating simple floats, and equal distances would
        # hide an implementation that orders by distance instead of rank.
        spread = draw(_DISTINCT_DISTANCES[n])
        keep = [True] * n if spread_over == "all" else draw(_SOME[n])
        batch = [
            c.model_copy(update={"dense_distance": d if on else None})
            for c, d, on in zip(batch, spread, keep, strict=True)
        ]
    return tuple(batch)


@st.composite
def renamed(draw: st.DrawFn, batch: tuple[WireCandidate, ...]) -> tuple[WireCandidate, ...]:
    """The same batch with everything but qualityScore inputs changed.

    Labels, dense scores, ranks, denseDistance and the chunk structure (which hits share a docId or
    a chunk) stay; docIds are renamed one-to-one, texts, source types and hybrid raw scores are new.
    """
    names = draw(st.permutations(DOC_IDS))
    rename = dict(zip(DOC_IDS, names, strict=True))
    out = []
    for c in batch:
        hybrid = c.score_label in LABELS["hybrid"]
        score = draw(fused_scores) if hybrid else c.score
        out.append(
            c.model_copy(
                update={
                    "doc_id": rename[c.doc_id],
                    "text": draw(_PICK_TEXT),
                    "source_type": draw(_PICK_SOURCE),
                    "score": score,
                    "raw_score": score,
                }
            )
        )
    return tuple(out)


@st.composite
def quality_requests(draw: st.DrawFn) -> QualityRequest:
    """Any question the single normalizer must answer: any label or alias, score, rank, distance."""
    kind: Kind = draw(st.sampled_from(("dense", "hybrid")))
    n = draw(st.integers(min_value=1, max_value=1000))
    return QualityRequest(
        score_label=draw(st.sampled_from(LABELS[kind])),
        score=draw(st.none() | (distances if kind == "dense" else fused_scores)),
        original_rank=draw(st.integers(min_value=1, max_value=n)),
        batch_size=n,
        max_l2_distance=draw(max_l2_distances),
        dense_distance=draw(st.none() | distances) if kind == "hybrid" else None,
    )


# -- requests about the generated knowledge base (search and lookup) -------------------------------------

_RRF_KS = st.sampled_from((60, 1, 10, 100, 1000))


def _kb_category(kb: KnowledgeBase) -> st.SearchStrategy[str | None]:
    return st.one_of(
        st.none(),
        st.sampled_from(kb.categories),
        st.sampled_from(kb.categories),
        st.sampled_from(kb.absent_categories),
    )


def _kb_query(kb: KnowledgeBase, modes: tuple[Kind, ...]) -> st.SearchStrategy[tuple[KbQuery, Kind]]:
    pairs = [(q, m) for q in kb.queries for m in modes if m == "dense" or q.hybrid]
    return st.sampled_from(pairs)


def kb_search_requests(
    kb: KnowledgeBase, modes: tuple[Kind, ...] = ("dense", "hybrid")
) -> st.SearchStrategy[SearchRequest]:
    """Any search of the generated knowledge base: any query shape, category (present, absent or none),
    k from 1 to past a category's size, RRF k from 1 to 1000."""

    @st.composite
    def build(draw: st.DrawFn) -> SearchRequest:
        query, mode = draw(_kb_query(kb, modes))
        return SearchRequest(
            query_text=query.text,
            query_vector=query.vector,
            mode=mode,
            k=draw(st.integers(min_value=query.min_k, max_value=kb.max_k)),
            category=draw(_kb_category(kb)),
            rrf_k=draw(_RRF_KS),
        )

    return build()


def kb_hints(kb: KnowledgeBase) -> st.SearchStrategy[Hints]:
    """L0 hints over the knowledge base's own words: long lists, words many texts contain."""
    words = st.lists(st.sampled_from(kb.words), max_size=60, unique=True).map(tuple)
    return st.builds(
        Hints,
        domain=st.none() | st.sampled_from(kb.words),
        entities=words,
        keywords=words,
        source_type=st.none() | st.sampled_from(("faq", "manual", "ticket", "runbook", "wiki page")),
    )


def kb_lookup_requests(
    kb: KnowledgeBase, modes: tuple[Kind, ...] = ("dense", "hybrid")
) -> st.SearchStrategy[LookupRequest]:
    """Any lookup of the generated knowledge base, with any settings and hints."""

    @st.composite
    def build(draw: st.DrawFn) -> LookupRequest:
        query, mode = draw(_kb_query(kb, modes))
        config = draw(configs())
        return LookupRequest(
            query_text=query.text,
            query_vector=query.vector,
            mode=mode,
            category=draw(_kb_category(kb)),
            retrieve_k=draw(st.integers(min_value=query.min_k, max_value=kb.max_k)),
            rrf_k=draw(_RRF_KS),
            hints=draw(kb_hints(kb)),
            config=config.model_copy(update={"return_n": draw(st.integers(1, 10))}),
        )

    return build()

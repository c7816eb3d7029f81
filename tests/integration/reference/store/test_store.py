"""MilvusKnowledgeStore on embedded Milvus Lite: schema, ingest, dense and hybrid search.

Expected values come from first principles: brute-force squared L2 in numpy for dense, and RRF
computed here from a brute-force dense ranking plus a separate BM25 search for hybrid. The fixture is
built so that no two fused scores tie (engines order ties differently) and so that one chunk is found
by BM25 only: its vector points away from the query, its text repeats the query terms.
"""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Iterator

import numpy as np
import pytest
from pymilvus import MilvusClient

from reference import (
    EmptyIngestError,
    IngestError,
    MilvusUnavailableError,
    Settings,
    StoreError,
    VectorDimensionError,
)
from reference.store._hits import hybrid_hits
from reference.store._ingest import Chunk
from reference.store._store import InvalidQueryError, MilvusKnowledgeStore, category_filter

DIM = 8
K = 5
QUERY_TEXT = "lantern harbor"
ODD_CATEGORY = 'say "hi" \\ bye'


def _unit(angle: float, axis: int) -> tuple[float, ...]:
    v = np.zeros(DIM, dtype=np.float32)
    v[0], v[axis] = np.cos(angle), np.sin(angle)
    return tuple(float(x) for x in v)


QUERY_VECTOR = _unit(0.0, 1)
# Dense top 5 is doc-00..doc-04 (angles grow with i). BM25 top 5 is designed as far, doc-00, doc-07,
# doc-02, doc-04, so singles sit at dense ranks {2, 4} and BM25 ranks {1, 3} and the three docs found by
# both have (dense, BM25) ranks (1, 2), (3, 4), (5, 5): no two fused scores can tie.
TEXTS = [
    "lantern harbor survey",
    "granite quarry report",
    "harbor fees for small boats",
    "weather notes from the north coast",
    "storm lantern with a brass handle and a long rope",
    "coastal map of the islands",
    "tide tables for spring",
    "lantern and harbor notes for the old north pier",
    "fishing nets and ropes",
    "ferry timetable to the islands",
]
CATEGORIES = ["news", "manual", ODD_CATEGORY, None]


def _corpus() -> list[Chunk]:
    # Dense distances grow with i (angles 0.1, 0.22, ...), all distinct; the last chunk points away.
    chunks = [
        Chunk(
            doc_id=f"doc-{i:02d}",
            chunk_index=i % 2,
            text=text,
            vector=_unit(0.1 + 0.12 * i, 1 + i % (DIM - 1)),
            category=CATEGORIES[i % len(CATEGORIES)],
            source_type="faq" if i % 2 else None,
        )
        for i, text in enumerate(TEXTS)
    ]
    far = tuple(-x for x in QUERY_VECTOR)
    chunks.append(
        Chunk(doc_id="far", chunk_index=0, text="lantern harbor lantern harbor", vector=far, category="news")
    )
    return chunks


CORPUS = _corpus()


def _brute_force(chunks: list[Chunk], query: tuple[float, ...]) -> list[tuple[str, float]]:
    """(evidence key, squared L2 in float32), nearest first."""
    q = np.asarray(query, dtype=np.float32)
    pairs = []
    for c in chunks:
        diff = np.asarray(c.vector, dtype=np.float32) - q
        pairs.append((c.evidence_key, float(np.sum(diff * diff, dtype=np.float32))))
    return sorted(pairs, key=lambda p: p[1])


@pytest.fixture(scope="module")
def client(tmp_path_factory: pytest.TempPathFactory) -> Iterator[MilvusClient]:
    c = MilvusClient(str(tmp_path_factory.mktemp("milvus") / "store.db"))
    yield c
    c.close()


@pytest.fixture(scope="module")
def store(client: MilvusClient) -> MilvusKnowledgeStore:
    """The shared corpus, ingested once; tests must not modify it."""
    s = MilvusKnowledgeStore(client, collection="shared", dim=DIM)
    s.ingest(CORPUS)
    return s


@pytest.fixture
def fresh(client: MilvusClient, request: pytest.FixtureRequest) -> Iterator[MilvusKnowledgeStore]:
    """An empty store of its own, dropped afterwards."""
    s = MilvusKnowledgeStore(
        client, collection=f"t_{request.node.name[:40]}".replace("[", "_").replace("]", ""), dim=DIM
    )
    s.drop()
    yield s
    s.drop()


@pytest.fixture
def calls(client: MilvusClient, monkeypatch: pytest.MonkeyPatch) -> Counter[str]:
    """Count the engine's search entry points on the shared client."""
    counter: Counter[str] = Counter()
    for name in ("search", "hybrid_search", "query"):
        original = getattr(client, name)

        def spy(*args: object, _name: str = name, _original=original, **kwargs: object) -> object:
            counter[_name] += 1
            return _original(*args, **kwargs)

        monkeypatch.setattr(client, name, spy)
    return counter


def _rrf_oracle(
    client: MilvusClient, chunks: list[Chunk], *, k: int, rrf_k: int = 60
) -> list[tuple[str, float]]:
    """RRF from a brute-force dense ranking and a separate BM25 search: sum of 1 / (rrf_k + rank)."""
    dense = [key for key, _ in _brute_force(chunks, QUERY_VECTOR)[:k]]
    bm25_hits = client.search(
        "shared",
        data=[QUERY_TEXT],
        anns_field="sparse",
        limit=k,
        search_params={"metric_type": "BM25"},
        output_fields=["doc_id", "chunk_index"],
    )[0]
    bm25 = [f"{hit['entity']['doc_id']}#{hit['entity']['chunk_index']}" for hit in bm25_hits]
    fused: Counter[str] = Counter()
    for ranking in (dense, bm25):
        for rank, key in enumerate(ranking, start=1):
            fused[key] += 1.0 / (rrf_k + rank)
    order = sorted(fused.items(), key=lambda p: -p[1])
    scores = [round(s, 12) for _, s in order]
    assert len(set(scores)) == len(scores), f"fixture has tied fused scores, fix it: {order}"
    return order


# -- dense ----------------------------------------------------------------------------------------


def test_dense_scores_are_the_brute_force_squared_l2(
    store: MilvusKnowledgeStore, calls: Counter[str]
) -> None:
    hits = store.search(QUERY_TEXT, QUERY_VECTOR, mode="dense", k=len(CORPUS))
    assert calls == {"search": 1}
    expected = _brute_force(CORPUS, QUERY_VECTOR)
    assert [h.evidence_key for h in hits] == [key for key, _ in expected]
    np.testing.assert_allclose([h.score for h in hits], [d for _, d in expected], rtol=1e-5, atol=1e-6)
    assert [h.original_rank for h in hits] == list(range(1, len(CORPUS) + 1))
    assert {h.score_label for h in hits} == {"dense"}
    assert all(h.raw_score == h.score and h.dense_distance is None for h in hits)
    assert [h.score for h in hits] == sorted(h.score for h in hits)


def test_dense_hits_carry_text_and_metadata(store: MilvusKnowledgeStore) -> None:
    hits = {h.evidence_key: h for h in store.search("", QUERY_VECTOR, mode="dense", k=len(CORPUS))}
    for chunk in CORPUS:
        hit = hits[chunk.evidence_key]
        assert (hit.text, hit.category, hit.source_type) == (chunk.text, chunk.category, chunk.source_type)


# -- hybrid ---------------------------------------------------------------------------------------


def test_hybrid_order_and_scores_are_rrf_of_separate_searches(
    store: MilvusKnowledgeStore, client: MilvusClient, calls: Counter[str]
) -> None:
    hits = store.search(QUERY_TEXT, QUERY_VECTOR, mode="hybrid", k=K)
    assert calls == {"hybrid_search": 1}
    expected = _rrf_oracle(client, CORPUS, k=K)[:K]
    assert [h.evidence_key for h in hits] == [key for key, _ in expected]
    np.testing.assert_allclose([h.score for h in hits], [s for _, s in expected], rtol=1e-6)
    assert {h.score_label for h in hits} == {"hybrid"}
    assert [h.original_rank for h in hits] == list(range(1, len(hits) + 1))
    assert all(h.raw_score == h.score for h in hits)


def test_hybrid_bm25_only_hit_keeps_label_fused_score_and_gets_its_dense_distance(
    store: MilvusKnowledgeStore, client: MilvusClient
) -> None:
    dense_top = {h.evidence_key for h in store.search("", QUERY_VECTOR, mode="dense", k=K)}
    assert "far#0" not in dense_top  # the premise: dense alone does not find it
    hits = {h.evidence_key: h for h in store.search(QUERY_TEXT, QUERY_VECTOR, mode="hybrid", k=K)}
    far = hits["far#0"]
    assert far.score_label == "hybrid"
    assert far.score == pytest.approx(dict(_rrf_oracle(client, CORPUS, k=K))["far#0"], rel=1e-6)
    assert far.dense_distance == pytest.approx(4.0, abs=1e-5)  # -q vs q, unit vectors


def test_hybrid_dense_distance_is_brute_force_for_every_hit(store: MilvusKnowledgeStore) -> None:
    expected = dict(_brute_force(CORPUS, QUERY_VECTOR))
    hits = store.search(QUERY_TEXT, QUERY_VECTOR, mode="hybrid", k=len(CORPUS))
    assert hits
    for hit in hits:
        assert hit.dense_distance == pytest.approx(expected[hit.evidence_key], rel=1e-5, abs=1e-6)


def test_hybrid_uses_the_given_rrf_k(store: MilvusKnowledgeStore, client: MilvusClient) -> None:
    # k = 2 rather than 1: at k = 1 the (5, 5) double ties the dense-only single at rank 2.
    hits = store.search(QUERY_TEXT, QUERY_VECTOR, mode="hybrid", k=K, rrf_k=2)
    expected = _rrf_oracle(client, CORPUS, k=K, rrf_k=2)[:K]
    assert [h.evidence_key for h in hits] == [key for key, _ in expected]
    np.testing.assert_allclose([h.score for h in hits], [s for _, s in expected], rtol=1e-6)


def test_hybrid_vectors_read_from_the_reply_equal_the_decoded_hits(
    store: MilvusKnowledgeStore, client: MilvusClient
) -> None:
    from pymilvus import AnnSearchRequest, RRFRanker

    requests = [
        AnnSearchRequest([list(QUERY_VECTOR)], "dense", {"metric_type": "L2"}, limit=K),
        AnnSearchRequest([QUERY_TEXT], "sparse", {"metric_type": "BM25"}, limit=K),
    ]
    fields = ["doc_id", "chunk_index", "text", "category", "source_type", "dense"]
    hits = client.hybrid_search("shared", requests, RRFRanker(60), limit=K, output_fields=fields)[0]
    entities, scores, vectors = hybrid_hits(hits, DIM)
    assert not hits.has_materialized  # the fast path: no hit was decoded
    entities = [dict(e) for e in entities]  # decoding below adds the vector to these very dicts
    decoded = list(hits)  # what reading hit by hit gives
    assert entities == [{k: v for k, v in h["entity"].items() if k != "dense"} for h in decoded]
    assert scores == [h["distance"] for h in decoded]
    assert vectors.dtype == np.float32
    assert vectors.tolist() == [list(np.asarray(h["entity"]["dense"], np.float32)) for h in decoded]
    slow = hybrid_hits(decoded, DIM)
    assert slow[1] == scores
    assert np.array_equal(slow[2], vectors)


@pytest.mark.parametrize("blank", ["", "   \n"])
def test_hybrid_with_blank_text_is_rrf_over_the_dense_list_alone(
    store: MilvusKnowledgeStore, calls: Counter[str], blank: str
) -> None:
    hits = store.search(blank, QUERY_VECTOR, mode="hybrid", k=K)
    assert calls == {"hybrid_search": 1}
    expected = [key for key, _ in _brute_force(CORPUS, QUERY_VECTOR)[:K]]
    assert [h.evidence_key for h in hits] == expected
    assert [h.score for h in hits] == pytest.approx([1 / (60 + r) for r in range(1, K + 1)], rel=1e-6)
    assert {h.score_label for h in hits} == {"hybrid"}


def test_hybrid_text_without_matching_term_still_returns_dense_hits(store: MilvusKnowledgeStore) -> None:
    hits = store.search("zzzqqq", QUERY_VECTOR, mode="hybrid", k=K)
    assert [h.evidence_key for h in hits] == [key for key, _ in _brute_force(CORPUS, QUERY_VECTOR)[:K]]


# -- category filter ------------------------------------------------------------------------------


@pytest.mark.parametrize("mode", ["dense", "hybrid"])
@pytest.mark.parametrize("category", ["news", ODD_CATEGORY])
def test_category_filter_applies_to_every_sub_request(
    store: MilvusKnowledgeStore, calls: Counter[str], mode: str, category: str
) -> None:
    hits = store.search(QUERY_TEXT, QUERY_VECTOR, mode=mode, k=len(CORPUS), category=category)
    assert sum(calls.values()) == 1
    wanted = {c.evidence_key for c in CORPUS if c.category == category}
    assert {h.evidence_key for h in hits} == wanted
    assert {h.category for h in hits} == {category}


def test_category_filter_escapes_quotes_and_backslashes() -> None:
    assert category_filter('a"b\\c') == 'category == "a\\"b\\\\c"'


def test_unknown_category_finds_nothing(store: MilvusKnowledgeStore) -> None:
    assert store.search(QUERY_TEXT, QUERY_VECTOR, mode="hybrid", k=K, category="nope") == []


# -- query validation -----------------------------------------------------------------------------


def test_query_vector_of_wrong_dimension_is_refused(store: MilvusKnowledgeStore) -> None:
    with pytest.raises(InvalidQueryError, match=r"expects \(8,\)"):
        store.search(QUERY_TEXT, [0.1] * 3, mode="dense", k=K)


@pytest.mark.parametrize(
    ("text", "vector", "category", "message"),
    [
        (QUERY_TEXT, ["a"] * DIM, None, "not a list of numbers"),
        (QUERY_TEXT, [1e39] + [0.0] * (DIM - 1), None, "too large for float32"),
        (QUERY_TEXT, [float("nan")] + [0.0] * (DIM - 1), None, "NaN"),
        ("lone \ud800 surrogate", QUERY_VECTOR, None, "lone surrogate"),
        (None, QUERY_VECTOR, None, "query text is a NoneType"),
        (QUERY_TEXT, QUERY_VECTOR, 3, "category is a int"),
    ],
)
def test_a_bad_query_is_the_reference_s_typed_error(
    store: MilvusKnowledgeStore, text: object, vector: list[object], category: object, message: str
) -> None:
    with pytest.raises(InvalidQueryError, match=message):
        store.search(text, vector, mode="hybrid", k=K, category=category)  # type: ignore[arg-type]


def test_unknown_mode_is_refused(store: MilvusKnowledgeStore) -> None:
    with pytest.raises(InvalidQueryError, match="'sparse'"):
        store.search(QUERY_TEXT, QUERY_VECTOR, mode="sparse", k=K)  # type: ignore[arg-type]


def test_search_on_missing_collection_says_ingest_first(client: MilvusClient) -> None:
    missing = MilvusKnowledgeStore(client, collection="never_made", dim=DIM)
    with pytest.raises(StoreError, match="does not exist; ingest"):
        missing.search(QUERY_TEXT, QUERY_VECTOR, mode="dense", k=K)
    assert not client.has_collection("never_made")
    assert missing.count() == 0


# -- ingest ---------------------------------------------------------------------------------------


def test_reingesting_upserts_instead_of_duplicating(fresh: MilvusKnowledgeStore) -> None:
    assert fresh.ingest(CORPUS, batch_size=4) == len(CORPUS)
    assert fresh.ingest(CORPUS, batch_size=3) == len(CORPUS)
    assert fresh.count() == len(CORPUS)
    changed = CORPUS[0].model_copy(update={"text": "granite quarry survey report, revised"})
    fresh.ingest([changed])
    assert fresh.count() == len(CORPUS)
    top = fresh.search("revised", QUERY_VECTOR, mode="dense", k=1)[0]
    assert top.text.endswith("revised")


def test_ingest_reports_progress_per_batch(fresh: MilvusKnowledgeStore) -> None:
    seen: list[int] = []
    fresh.ingest(CORPUS, batch_size=4, progress=seen.append)
    assert seen == [4, 8, 11]


def test_vector_of_wrong_dimension_names_the_chunk(fresh: MilvusKnowledgeStore) -> None:
    bad = Chunk(doc_id="d", chunk_index=3, text="t", vector=(0.1, 0.2))
    with pytest.raises(VectorDimensionError, match=r"chunk d#3 .*dimension 2.*expects 8"):
        fresh.ingest([bad])


def test_missing_vector_needs_an_embedder(fresh: MilvusKnowledgeStore) -> None:
    with pytest.raises(IngestError, match="d#0 has no vector"):
        fresh.ingest([Chunk(doc_id="d", chunk_index=0, text="no vector")])


def test_missing_vectors_are_embedded_when_an_embedder_is_given(fresh: MilvusKnowledgeStore) -> None:
    from reference._embed import HashingEmbedder

    embedder = HashingEmbedder(DIM)
    fresh.ingest([Chunk(doc_id="d", chunk_index=0, text="embed me please")], embedder=embedder)
    hit = fresh.search("", embedder.embed(["embed me please"])[0], mode="dense", k=1)[0]
    assert hit.evidence_key == "d#0"
    assert hit.score == pytest.approx(0.0, abs=1e-6)


def test_embedder_of_other_dimension_is_refused(fresh: MilvusKnowledgeStore) -> None:
    from reference._embed import HashingEmbedder

    with pytest.raises(VectorDimensionError, match="embedder makes 16-dimensional"):
        fresh.ingest([Chunk(doc_id="d", chunk_index=0, text="x")], embedder=HashingEmbedder(16))


def test_empty_ingest_is_an_error_and_creates_nothing(
    fresh: MilvusKnowledgeStore, client: MilvusClient
) -> None:
    with pytest.raises(EmptyIngestError):
        fresh.ingest([])
    assert not client.has_collection(fresh.collection)


def test_duplicate_key_within_one_ingest_is_refused(fresh: MilvusKnowledgeStore) -> None:
    with pytest.raises(IngestError, match="doc-00#0 appears twice"):
        fresh.ingest([CORPUS[0], CORPUS[0]])


def test_existing_collection_of_other_dimension_is_refused(
    store: MilvusKnowledgeStore, client: MilvusClient
) -> None:
    other = MilvusKnowledgeStore(client, collection=store.collection, dim=DIM * 2)
    with pytest.raises(StoreError, match=r"holds 8-dimensional vectors.*dim 16"):
        other.ensure_collection()


def test_hnsw_index_is_selectable(fresh: MilvusKnowledgeStore, client: MilvusClient) -> None:
    hnsw = MilvusKnowledgeStore(client, collection=fresh.collection, dim=DIM, index_type="HNSW")
    hnsw.ingest(CORPUS)
    index = client.describe_index(hnsw.collection, index_name="dense")
    assert index["index_type"] == "HNSW"
    top = hnsw.search(QUERY_TEXT, QUERY_VECTOR, mode="dense", k=3)
    assert [h.evidence_key for h in top] == [key for key, _ in _brute_force(CORPUS, QUERY_VECTOR)[:3]]


# -- connection -----------------------------------------------------------------------------------


def test_unreachable_uri_fails_fast_naming_the_uri_never_the_token() -> None:
    started = time.monotonic()
    with pytest.raises(MilvusUnavailableError) as info:
        MilvusKnowledgeStore.connect("http://127.0.0.1:1", collection="c", dim=DIM, token="s3cret", timeout=5)
    assert time.monotonic() - started < 10
    assert "http://127.0.0.1:1" in str(info.value)
    assert "s3cret" not in str(info.value)
    assert info.value.__cause__ is None  # nothing chained that could carry the options


def test_close_leaves_a_handed_in_client_open(client: MilvusClient) -> None:
    MilvusKnowledgeStore(client, collection="whatever", dim=DIM).close()
    assert isinstance(client.list_collections(), list)  # still usable


def test_connect_owns_and_closes_its_client(tmp_path) -> None:
    with MilvusKnowledgeStore.connect(str(tmp_path / "own.db"), collection="c", dim=DIM) as own:
        own.ingest(CORPUS[:2])
        assert own.count() == 2
    assert not own._owns_client


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"collection": "bad name", "dim": DIM}, "collection name"),
        ({"collection": "ok", "dim": 1}, "dim is 1"),
        ({"collection": "ok", "dim": DIM, "index_type": "IVF"}, "index_type"),
    ],
)
def test_bad_constructor_arguments_say_what_to_do(client: MilvusClient, kwargs: dict, match: str) -> None:
    with pytest.raises(StoreError, match=match):
        MilvusKnowledgeStore(client, **kwargs)


def test_settings_default_and_override(client: MilvusClient) -> None:
    assert MilvusKnowledgeStore(client, collection="x", dim=DIM).settings == Settings()
    custom = Settings(rrf_k=7)
    assert MilvusKnowledgeStore(client, collection="x", dim=DIM, settings=custom).settings.rrf_k == 7

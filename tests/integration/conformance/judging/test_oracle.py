"""The kit's oracle on embedded Milvus Lite: its RRF is the textbook one, its L2 is the engine's."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from conformance.corpus._scenario_corpus import ScenarioCorpus, build_corpus
from conformance.judging._oracle import MilvusOracle, Ranked, brute_force_l2, rrf_fuse
from conformance.judging._spec_model import DISTANCE_TOLERANCE

pymilvus = pytest.importorskip("pymilvus")


@pytest.fixture(scope="module")
def corpus() -> ScenarioCorpus:
    return build_corpus()


@pytest.fixture(scope="module")
def oracle(tmp_path_factory: pytest.TempPathFactory, corpus: ScenarioCorpus) -> Iterator[MilvusOracle]:
    path: Path = tmp_path_factory.mktemp("oracle") / "oracle.db"
    client = pymilvus.MilvusClient(str(path))
    built = MilvusOracle.ingest(client, "rqs_test_oracle", corpus)
    try:
        yield built
    finally:
        built.drop()
        client.close()


def test_rrf_is_the_hand_computed_sum_of_reciprocal_ranks() -> None:
    a, b, c, d = ("a", 0), ("b", 0), ("c", 0), ("d", 0)
    fused = rrf_fuse(([a, b, c], [c, b, d]), rrf_k=60, limit=10)
    assert [r.key for r in fused] == [c, b, a, d]
    assert [r.rank for r in fused] == [1, 2, 3, 4]
    expected = [1 / 63 + 1 / 61, 1 / 62 + 1 / 62, 1 / 61, 1 / 63]
    assert [r.score for r in fused] == pytest.approx(expected, abs=1e-15)
    assert rrf_fuse(([a, b, c], [c, b, d]), rrf_k=1, limit=1) == [Ranked(c, 1, 1 / 4 + 1 / 2)]
    assert len(rrf_fuse(([a, b, c], [c, b, d]), limit=2)) == 2
    assert rrf_fuse(((), ()), limit=3) == []


def test_brute_force_l2_is_squared_euclidean_in_float32() -> None:
    distances = brute_force_l2([1.0, 0.0], [[1.0, 0.0], [0.0, 1.0], [-1.0, 0.0]])
    assert distances.dtype.name == "float32"
    assert distances.tolist() == [0.0, 2.0, 4.0]


@pytest.mark.parametrize("name", ["failover", "snapshot", "compliance", "replication"])
def test_brute_force_equals_the_engine_for_every_chunk(
    oracle: MilvusOracle, corpus: ScenarioCorpus, name: str
) -> None:
    query = corpus.query(name)
    engine = oracle.dense_search(query.vector, limit=len(corpus.corpus.chunks))
    brute = oracle.l2(query.vector)
    assert len(engine) == len(brute)
    for hit in engine:
        assert hit.score == pytest.approx(brute[hit.key], abs=DISTANCE_TOLERANCE)
    assert [r.key for r in engine] == [r.key for r in oracle.l2_order(query.vector)]


@pytest.mark.parametrize("name", ["failover", "snapshot", "compliance", "replication"])
def test_the_engine_confirms_what_the_corpus_advertises(
    oracle: MilvusOracle, corpus: ScenarioCorpus, name: str
) -> None:
    query = corpus.query(name)
    everything = len(corpus.corpus.chunks)
    assert tuple(r.key for r in oracle.dense_search(query.vector, everything)) == query.dense_order
    assert tuple(r.key for r in oracle.bm25_search(query.text, everything)) == query.bm25_order
    for sub_limit in (None, everything):
        fused = oracle.rrf(query.vector, query.text, query.k, sub_limit=sub_limit)
        assert tuple(r.key for r in fused) == query.rrf_order


@pytest.mark.parametrize("name", ["failover", "snapshot"])
def test_python_rrf_agrees_with_the_engines_own_ranker(
    oracle: MilvusOracle, corpus: ScenarioCorpus, name: str
) -> None:
    """Not used by the kit (it fuses in Python), but a disagreement would mean the RRF reading is off."""
    query = corpus.query(name)
    requests = [
        pymilvus.AnnSearchRequest([list(query.vector)], "dense", {"metric_type": "L2"}, query.k),
        pymilvus.AnnSearchRequest([query.text], "sparse", {"metric_type": "BM25"}, query.k),
    ]
    hits = oracle._client.hybrid_search(  # the oracle's own collection, asked directly
        oracle.collection,
        requests,
        pymilvus.RRFRanker(60),
        limit=query.k,
        output_fields=["doc_id", "chunk_index"],
    )[0]
    engine = [((h["entity"]["doc_id"], h["entity"]["chunk_index"]), h["distance"]) for h in hits]
    ours = [(r.key, r.score) for r in oracle.rrf(query.vector, query.text, query.k)]
    assert [k for k, _ in engine] == [k for k, _ in ours]
    for (_, theirs), (_, mine) in zip(engine, ours, strict=True):
        assert theirs == pytest.approx(mine, abs=1e-6)


def test_category_filters_restrict_every_search(oracle: MilvusOracle, corpus: ScenarioCorpus) -> None:
    query = corpus.query("snapshot")
    storage = oracle.dense_search(query.vector, 10, category="storage")
    assert {corpus.category_of(r.key) for r in storage} == {"storage"}
    assert [r.key for r in storage] == [r.key for r in oracle.l2_order(query.vector, "storage")]
    assert oracle.dense_search(query.vector, 10, category="legal") == []
    assert oracle.bm25_search(query.text, 10, category="billing") == []
    assert oracle.rrf(query.vector, query.text, query.k, category="storage")[0].key == (
        "sto-snapshot-policy",
        0,
    )


def test_drop_removes_only_the_oracle_collection(tmp_path: Path, corpus: ScenarioCorpus) -> None:
    client = pymilvus.MilvusClient(str(tmp_path / "drop.db"))
    try:
        built = MilvusOracle.ingest(client, "rqs_drop_oracle", corpus)
        MilvusOracle.ingest(client, "rqs_drop_oracle", corpus)  # a leftover of the same name is replaced
        assert client.has_collection("rqs_drop_oracle")
        built.drop()
        assert not client.has_collection("rqs_drop_oracle")
        built.drop()  # idempotent
    finally:
        client.close()


@pytest.fixture(scope="module")
def kb_oracle(tmp_path_factory: pytest.TempPathFactory) -> Iterator[MilvusOracle]:
    path: Path = tmp_path_factory.mktemp("kb-oracle") / "oracle.db"
    client = pymilvus.MilvusClient(str(path))
    built = MilvusOracle.ingest(client, "rqs_test_kb_oracle", build_corpus(seed=20261201))
    try:
        yield built
    finally:
        built.drop()
        client.close()


def test_the_engine_orders_every_knowledge_base_keyword_by_its_term_count(kb_oracle: MilvusOracle) -> None:
    kb = kb_oracle.corpus.knowledge_base
    assert kb is not None
    chunks = kb_oracle.corpus.corpus.chunks
    for keyword in kb.keywords:
        counts = {(c.doc_id, c.chunk_index): c.text.split().count(keyword) for c in chunks}
        want = [k for k, n in sorted(counts.items(), key=lambda kv: -kv[1]) if n]
        assert [r.key for r in kb_oracle.bm25_search(keyword, 50)] == want, keyword


def test_the_engine_finds_nothing_for_the_knowledge_bases_other_query_words(kb_oracle: MilvusOracle) -> None:
    kb = kb_oracle.corpus.knowledge_base
    assert kb is not None
    for query in kb.queries:
        if not any(k in query.text.split() for k in kb.keywords):
            assert kb_oracle.bm25_search(query.text, 50) == [], (query.name, query.text)


def test_the_knowledge_bases_category_values_filter_exactly(kb_oracle: MilvusOracle) -> None:
    kb = kb_oracle.corpus.knowledge_base
    assert kb is not None
    vector = kb.queries[0].vector
    for category in kb.categories:
        found = {r.key for r in kb_oracle.dense_search(vector, 500, category)}
        want = {(c.doc_id, c.chunk_index) for c in kb.chunks if c.category == category}
        assert found == want, category
    for category in kb.absent_categories:
        assert kb_oracle.dense_search(vector, 500, category) == [], category


def test_oracles_of_one_engine_and_corpus_share_the_engines_answers(
    tmp_path: Path, corpus: ScenarioCorpus
) -> None:
    client = pymilvus.MilvusClient(str(tmp_path / "shared.db"))
    searched: list[str] = []
    real_search = client.search

    def counting_search(collection: str, *args: object, **kwargs: object) -> object:
        searched.append(collection)
        return real_search(collection, *args, **kwargs)

    client.search = counting_search
    query = next(iter(corpus.queries.values()))
    built = []
    try:
        for name, engine in (
            ("rqs_share_a", "uri:one"),
            ("rqs_share_b", "uri:one"),
            ("rqs_share_c", "uri:two"),
        ):
            built.append(MilvusOracle.ingest(client, name, corpus, engine=engine))
            answer = built[-1].dense_search(query.vector, 5)
            assert [r.key for r in answer] == list(query.dense_order[:5])
        # The second oracle of engine "uri:one" answered from the first one's search; "uri:two" asked.
        assert searched == ["rqs_share_a", "rqs_share_c"]
        other = build_corpus(seed=7)  # another corpus on the same engine shares nothing either
        built.append(MilvusOracle.ingest(client, "rqs_share_d", other, engine="uri:one"))
        built[-1].dense_search(next(iter(other.queries.values())).vector, 5)
        assert searched[-1] == "rqs_share_d"
    finally:
        for oracle in built:
            oracle.drop()
        client.close()

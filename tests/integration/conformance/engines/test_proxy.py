"""The recording proxy tells a dense-only search from one that also ran BM25 or a hybrid search.

What "dense only" means is the spec model's (:func:`check_dense_only`, R6); these show the proxy records
enough for it to tell.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any

import pytest

from conformance.engines import Engine, start_engine
from conformance.engines._proxy import RecordedCall, RecordingProxy, SearchTarget
from conformance.judging._spec_model import check_dense_only

pytest_plugins = ["pytester"]

DIM = 4


def non_dense_searches(calls: Sequence[RecordedCall]) -> list[str]:
    """What the spec model finds that is not a dense ANN search, as its violations say it."""
    return [v.actual for v in check_dense_only(calls, "the recorded calls")]


@pytest.fixture(scope="module")
def engine() -> Iterator[Engine]:
    with start_engine("lite") as started:
        yield started


@pytest.fixture(scope="module")
def proxy(engine: Engine) -> Iterator[RecordingProxy]:
    with RecordingProxy(engine.endpoint.uri) as started:
        yield started


@pytest.fixture(scope="module")
def collection(engine: Engine, proxy: RecordingProxy) -> Iterator[tuple[Any, str]]:
    """A dense + BM25 collection created through the proxy with a raw pymilvus client."""
    from pymilvus import DataType, Function, FunctionType, MilvusClient

    client = MilvusClient(uri=proxy.uri)
    name = engine.collection_name("proxy_test")
    schema = client.create_schema(auto_id=False)
    schema.add_field("id", DataType.INT64, is_primary=True)
    schema.add_field("text", DataType.VARCHAR, max_length=200, enable_analyzer=True)
    schema.add_field("vec", DataType.FLOAT_VECTOR, dim=DIM)
    schema.add_field("bm25", DataType.SPARSE_FLOAT_VECTOR)
    schema.add_function(
        Function(
            name="f", function_type=FunctionType.BM25, input_field_names=["text"], output_field_names=["bm25"]
        )
    )
    index = client.prepare_index_params()
    index.add_index("vec", index_type="FLAT", metric_type="L2")
    index.add_index("bm25", index_type="SPARSE_INVERTED_INDEX", metric_type="BM25")
    client.create_collection(name, schema=schema, index_params=index, consistency_level="Strong")
    client.insert(
        name,
        [
            {"id": i, "text": f"word{i} failover", "vec": [float(i == j) for j in range(DIM)]}
            for i in range(DIM)
        ],
    )
    yield client, name
    client.drop_collection(name)
    client.close()


def _dense(client: Any, name: str) -> None:
    client.search(name, data=[[1.0, 0, 0, 0]], anns_field="vec", limit=2, search_params={"metric_type": "L2"})


def _bm25(client: Any, name: str) -> None:
    client.search(name, data=["failover"], anns_field="bm25", limit=2, search_params={"metric_type": "BM25"})


def _hybrid(client: Any, name: str) -> None:
    from pymilvus import AnnSearchRequest, RRFRanker

    requests = [
        AnnSearchRequest([[1.0, 0, 0, 0]], "vec", {"metric_type": "L2"}, 2),
        AnnSearchRequest(["failover"], "bm25", {"metric_type": "BM25"}, 2),
    ]
    client.hybrid_search(name, requests, RRFRanker(60), limit=2)


def test_a_dense_mode_search_is_one_dense_search(proxy: RecordingProxy, collection: tuple[Any, str]) -> None:
    client, name = collection
    mark = proxy.mark()
    _dense(client, name)
    searches = [c for c in proxy.calls_since(mark) if c.is_search]
    assert [(c.method, c.collection, c.searches) for c in searches] == [
        ("Search", name, (SearchTarget("vec", "dense", "L2"),))
    ]
    assert searches[0].primary_field  # the keys it returned, for hydration (readings 17)
    assert non_dense_searches(proxy.calls_since(mark)) == []


def test_a_dense_mode_that_also_runs_bm25_is_caught(
    proxy: RecordingProxy, collection: tuple[Any, str]
) -> None:
    client, name = collection
    mark = proxy.mark()
    _dense(client, name)
    _bm25(client, name)
    (problem,) = non_dense_searches(proxy.calls_since(mark))
    assert "text query on field 'bm25', metric BM25" in problem


def test_a_hybrid_search_is_caught_with_its_sub_requests(
    proxy: RecordingProxy, collection: tuple[Any, str]
) -> None:
    client, name = collection
    mark = proxy.mark()
    _hybrid(client, name)
    (call,) = [c for c in proxy.calls_since(mark) if c.is_search]
    assert call.method == "HybridSearch"
    assert [(s.anns_field, s.kind) for s in call.searches] == [("vec", "dense"), ("bm25", "text")]
    assert non_dense_searches([call]) == [call.describe()]


def test_engine_errors_pass_through(proxy: RecordingProxy, collection: tuple[Any, str]) -> None:
    from pymilvus.exceptions import MilvusException

    client, _ = collection
    with pytest.raises(MilvusException):
        client.search("rqs_no_such_collection", data=[[1.0, 0, 0, 0]], anns_field="vec", limit=1)


def test_a_request_the_engine_rejects_is_not_recorded_as_the_engine_failing(
    proxy: RecordingProxy, collection: tuple[Any, str]
) -> None:
    from pymilvus.exceptions import MilvusException

    client, name = collection
    mark = proxy.mark()
    with pytest.raises(MilvusException):  # a filter literal with an escape the engine cannot parse
        client.search(name, data=[[1.0, 0, 0, 0]], anns_field="vec", limit=1, filter='category == "C:\\s"')
    searches = [c for c in proxy.calls_since(mark) if c.method == "Search"]
    assert searches
    assert all(c.engine_error is None for c in searches), searches  # the implementation's own fault


def test_an_engine_that_fails_a_search_is_recorded_as_failing(engine: Engine) -> None:
    from pymilvus import MilvusClient
    from pymilvus.exceptions import MilvusException

    from ._erring_engine import REASON, ErringEngine

    with ErringEngine(engine.endpoint.uri, every=1) as erring, RecordingProxy(erring.uri) as proxy:
        client = MilvusClient(uri=proxy.uri)
        name = engine.collection_name("erring")
        client.create_collection(name, dimension=4)
        with pytest.raises(MilvusException):
            client.search(name, data=[[1.0, 0, 0, 0]], limit=1)
        client.drop_collection(name)
        client.close()
    failed = [c.engine_error for c in proxy.calls_since(0) if c.method == "Search"]
    assert failed == [f"code 65535: {REASON}"]


def test_an_in_process_adapter_is_recorded_too(engine: Engine, proxy: RecordingProxy) -> None:
    """The reference adapter, handed the proxied endpoint, makes one dense Search in dense mode."""
    from conformance import Corpus, CorpusChunk, SearchRequest
    from conformance.adapters.reference import ReferenceAdapter

    endpoint = engine.endpoint.model_copy(update={"uri": proxy.uri})
    chunks = tuple(
        CorpusChunk(
            doc_id=f"d{i}",
            chunk_index=0,
            text=f"failover note {i}",
            vector=[float(i == j) for j in range(DIM)],
        )
        for i in range(DIM)
    )
    adapter = ReferenceAdapter()
    try:
        adapter.prepare(endpoint, Corpus(name="proxied", dim=DIM, chunks=chunks))
        for mode, hybrid in (("dense", False), ("hybrid", True)):
            mark = proxy.mark()
            adapter.search(SearchRequest(query_text="failover", query_vector=[1.0, 0, 0, 0], mode=mode, k=2))
            problems = non_dense_searches(proxy.calls_since(mark))
            assert bool(problems) is hybrid, problems
            assert all(p.startswith("HybridSearch(") for p in problems), problems
    finally:
        adapter.close()


def test_the_fixtures_route_only_the_implementation_through_the_proxy(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(
        """
        def test_endpoint(rqs_engine, rqs_recorder, rqs_adapter_endpoint):
            assert rqs_adapter_endpoint.uri == rqs_recorder.uri != rqs_engine.endpoint.uri
            assert rqs_adapter_endpoint.collection_prefix == rqs_engine.prefix
            rqs_engine.client().list_collections()  # the kit's own client: not recorded
            assert rqs_recorder.calls_since(0) == []
        """
    )
    pytester.runpytest().assert_outcomes(passed=1)

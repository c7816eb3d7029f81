"""The peers' timing (``benchmarks.figures.retrieval.peers``, ``peer_child``): structure and behaviour,
never speed.

No venv is built and no engine started here: the child's request replay runs against a fake client, and
the kit side against a peers tool whose venvs cannot be built, which must skip with a message, not fail.
"""

from __future__ import annotations

import types

import pytest

from benchmarks.children import peer_child as _peer_child
from benchmarks.figures.retrieval import peers as _peers
from benchmarks.rendering.peers import peers as peers_section
from benchmarks.rendering.report import checks

REQUEST = {
    "sub_requests": [
        {"anns_field": "dense", "data": "vector", "param": {"metric_type": "L2"}, "limit": 20},
        {"anns_field": "sparse", "data": "text", "param": {"metric_type": "BM25"}, "limit": 20},
    ],
    "ranker": "RRFRanker",
    "ranker_params": {"strategy": "rrf", "params": {"k": 60}},
    "limit": 20,
    "output_fields": ["text", "doc_id"],
    "reply_fields": ["doc_id", "text"],
}


def child_output(**request: object) -> dict:
    return {
        "library": "langchain",
        "versions": {"langchain-milvus": "0.4.0", "pymilvus": "3.0.2"},
        "ingest_seconds": 1.0,
        "wall_s": {"peer": [0.011, 0.012, 0.013], "bare": [0.010, 0.010, 0.011]},
        "client_cpu_s": {"peer": 0.009, "bare": 0.006},
        "request": {**REQUEST, **request},
    }


def test_a_peer_is_summarized_with_its_ratio_versions_and_what_its_request_lacks() -> None:
    row = _peers.summarize_peer(child_output())
    assert row["n"] == 3
    assert row["peer_vs_bare"]["p50"] == pytest.approx(1.2)
    assert row["client_cpu_ms"] == {"peer": 3.0, "bare": 2.0}
    assert row["versions"]["langchain-milvus"] == "0.4.0"
    assert [d.split(" ")[:3] for d in row["differs"]] == [["no", "dense", "vector"]]


def test_request_differences_name_the_ranker_the_rrf_k_and_the_vectors() -> None:
    same = {**REQUEST, "output_fields": ["*"], "reply_fields": ["dense", "text"]}
    assert _peers.request_differences(same) == []
    other = {**same, "ranker": "WeightedRanker", "ranker_params": {"weights": [0.5, 0.5]}}
    found = _peers.request_differences(other)
    assert any("WeightedRanker" in d for d in found)
    assert any("RRF k" in d for d in found)


def test_a_peer_whose_venv_cannot_be_built_is_skipped_saying_why(monkeypatch) -> None:
    class PeersError(Exception):
        pass

    def ensure_venv(library: object) -> None:
        raise PeersError("cannot build the langchain venv (uv pip install...): no network")

    tool = types.SimpleNamespace(
        LIBRARIES=[types.SimpleNamespace(key="langchain")], PeersError=PeersError, ensure_venv=ensure_venv
    )
    monkeypatch.setattr(_peers, "_peers_tool", lambda: tool)
    monkeypatch.setattr(_peers, "_write_inputs", lambda *_: None)
    rows = _peers.run_peers(
        "http://127.0.0.1:1", "p_", None, [], size=10, k=20, rrf_k=60, warmup=0, libraries=["langchain", "x"]
    )
    assert rows[0]["library"] == "langchain"
    assert "cannot be built" in rows[0]["not_run"]
    assert "no network" in rows[0]["not_run"]
    assert rows[1]["not_run"].startswith("unknown")


def run_with_peers() -> dict:
    figures = {"p50": 0.0, "client_cpu_per_call": 3.0}
    return {
        "engine": "lite-2.5.1",
        "engine_version": "milvus_lite-2.5.1",
        "size": 10_000,
        "lookup_vs_bare": {"p50": 1.05, "p95": 1.0, "paired_median": 1.05},
        "reference_vs_legacy": {"p50": 0.6},
        "latency_ms": {"lookup": {**figures, "p50": 7.9}, "bare_hybrid_same_fields": {**figures, "p50": 7.5}},
        "peers": [_peers.summarize_peer(child_output()), {"library": "haystack", "not_run": "no venv"}],
    }


def test_the_report_sets_the_reference_beside_each_peer() -> None:
    run = run_with_peers()
    rows = [
        row
        for row in checks(
            {
                "retrieval": [run],
                "post_process": {"us_per_call": {}},
                "conformance": {"command": "rag-conformance run", "wall_s": 1.0},
            }
        )
        if row["figure"].startswith("1b.")
    ]
    assert [row["verdict"] for row in rows] == ["met", "not run: no venv"]
    text = "\n".join(peers_section([run]))
    assert "langchain (langchain-milvus 0.4.0, pymilvus 3.0.2)" in text
    assert "**1.200x**" in text
    assert "**1.050x**" in text
    assert "haystack (lite-2.5.1 10,000): not run: no venv" in text
    assert "no dense vector in the reply" in text


def test_the_child_replays_the_recorded_request_with_fresh_sub_requests() -> None:
    sent = []

    class Client:
        def hybrid_search(self, *args, **kwargs):
            sent.append((args, kwargs))
            return [[{"entity": {"doc_id": "d"}}]]

    from pymilvus import AnnSearchRequest, RRFRanker

    requests = [
        AnnSearchRequest(data=[[0.1, 0.2]], anns_field="dense", param={"metric_type": "L2"}, limit=5),
        AnnSearchRequest(data=["refunds"], anns_field="sparse", param={"metric_type": "BM25"}, limit=5),
    ]
    ranker = RRFRanker(60)
    call = (Client(), ("coll", requests, ranker), {"limit": 5, "output_fields": ["doc_id"]})
    assert _peer_child._bare(call)() == 1
    ((args, kwargs),) = sent
    assert args[0] == "coll"
    assert args[2] is ranker
    assert kwargs == {"limit": 5, "output_fields": ["doc_id"]}
    assert [r.anns_field for r in args[1]] == ["dense", "sparse"]
    assert all(new is not old for new, old in zip(args[1], requests, strict=True))
    assert [r.data for r in args[1]] == [r.data for r in requests]
    shape = _peer_child._shape(call)
    assert [s["data"] for s in shape["sub_requests"]] == ["vector", "text"]
    assert shape["ranker"] == "RRFRanker"
    assert shape["output_fields"] == ["doc_id"]
    assert shape["limit"] == 5


def test_a_size_without_a_budget_shows_no_target_and_no_verdict() -> None:
    run = {**run_with_peers(), "size": 2_000, "peers": []}
    results = {
        "retrieval": [run],
        "post_process": {"us_per_call": {}},
        "conformance": {"command": "rag-conformance run", "wall_s": 1.0},
    }
    (row,) = [row for row in checks(results) if row["figure"].startswith("1. ")]
    assert row["target"] == "-"
    assert row["verdict"] == "n/a (no budget for this engine and size)"

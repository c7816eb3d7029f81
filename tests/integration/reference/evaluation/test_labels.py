"""The bundled set's paraphrase and exact-token labels hold with the real model.

A paraphrase must be found by dense search and missed by BM25 (top 5, unfiltered), an exact-token query
the reverse. If a model, analyzer or engine update breaks one, this names the query to reword or
relabel (evaluation/data/README.md says how the labels were checked).
"""

from __future__ import annotations

import pytest
from pymilvus import MilvusClient

from reference import MilvusKnowledgeStore, WordLlamaEmbedder, load_eval_set, run_evaluation

pytest.importorskip("wordllama", reason="the embed extra (wordllama) is not installed")


@pytest.mark.parametrize("kind", ["paraphrase", "exact_token"])
def test_queries_of_the_kind_behave_as_labelled(tmp_path_factory: pytest.TempPathFactory, kind: str) -> None:
    full = load_eval_set()
    checked = full.model_copy(update={"queries": tuple(q for q in full.queries if q.kind == kind)})
    assert len(checked.queries) >= 15
    client = MilvusClient(str(tmp_path_factory.mktemp("labels") / "labels.db"))
    try:
        embedder = WordLlamaEmbedder()
        store = MilvusKnowledgeStore(client, collection="labels", dim=embedder.dim)
        run = run_evaluation(checked, store, embedder, modes=("dense",), ks=(5,))
    finally:
        client.close()
    wrong = {
        o.id: (o.query, o.label_check.dense_rank, o.label_check.bm25_rank)
        for o in run.outcomes
        if o.label_check is not None and not o.label_check.as_labelled(kind)
    }
    assert all(o.label_check is not None for o in run.outcomes)
    assert wrong == {}, f"{kind} queries not as labelled (query, dense rank, BM25 rank): {wrong}"

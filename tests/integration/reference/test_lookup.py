"""lookup_knowledge on Milvus Lite: paths, the category low-quality retry, caps, engine call counts.

The corpus has a category of chunks close to the query (quality about 0.9) and one of chunks nearly
orthogonal to it (quality about 0.1) whose text nevertheless matches the query words, so hybrid ranks
them well while their dense distance says they are poor: the retry must follow quality, not rank.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator

import numpy as np
import pytest
from pymilvus import MilvusClient

from reference import L0Hints, Settings, post_process
from reference._lookup import LookupResult, lookup_knowledge
from reference.store._ingest import Chunk
from reference.store._store import MilvusKnowledgeStore

DIM = 8
QUERY_TEXT = "kettle descaling"
QUERY_VECTOR = (1.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0)
NOWHERE = (0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 1.0)  # far from every chunk


def _vector(cos: float, axis: int) -> tuple[float, ...]:
    v = np.zeros(DIM, dtype=np.float32)
    v[0], v[axis] = cos, np.sqrt(1.0 - cos * cos)
    return tuple(float(x) for x in v)


def _corpus() -> list[Chunk]:
    chunks = []
    for i in range(4):  # one document, four good chunks: exercises the per-document cap
        chunks.append(
            Chunk(
                doc_id="near-manual",
                chunk_index=i,
                text=f"water kettle part {i}",
                vector=_vector(0.95 - 0.02 * i, 1),
                category="near",
            )
        )
    for i in range(3):
        chunks.append(
            Chunk(
                doc_id=f"near-faq-{i}",
                chunk_index=0,
                text=f"faq entry {i}",
                vector=_vector(0.85 - 0.03 * i, 2),
                category="near",
            )
        )
    for i in range(4):
        chunks.append(
            Chunk(
                doc_id=f"far-{i}",
                chunk_index=0,
                text="kettle descaling kettle descaling" + " more" * i,
                vector=_vector(0.12 - 0.02 * i, 3 + i),
                category="far",
            )
        )
    return chunks


CORPUS = _corpus()


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> Iterator[MilvusKnowledgeStore]:
    client = MilvusClient(str(tmp_path_factory.mktemp("milvus") / "lookup.db"))
    s = MilvusKnowledgeStore(client, collection="lookup", dim=DIM)
    s.ingest(CORPUS)
    yield s
    client.close()


@pytest.fixture
def calls(store: MilvusKnowledgeStore, monkeypatch: pytest.MonkeyPatch) -> Counter[str]:
    counter: Counter[str] = Counter()
    for name in ("search", "hybrid_search", "query"):
        original = getattr(store.client, name)

        def spy(*args: object, _name: str = name, _original=original, **kwargs: object) -> object:
            counter[_name] += 1
            return _original(*args, **kwargs)

        monkeypatch.setattr(store.client, name, spy)
    return counter


ENGINE_CALL = {"dense": "search", "hybrid": "hybrid_search"}
MODES = pytest.mark.parametrize("mode", ["dense", "hybrid"])


@MODES
def test_without_category_the_path_is_unfiltered(
    store: MilvusKnowledgeStore, calls: Counter[str], mode: str
) -> None:
    found = lookup_knowledge(store, QUERY_TEXT, QUERY_VECTOR, mode=mode)
    assert (found.path, found.retried, found.filtered_result) == ("unfiltered", False, None)
    assert calls == {ENGINE_CALL[mode]: 1}
    assert found.result == post_process(found.candidates, store.settings)
    assert {c.score_label for c in found.candidates} == {mode}


@MODES
def test_good_filtered_result_is_used_without_retry(
    store: MilvusKnowledgeStore, calls: Counter[str], mode: str
) -> None:
    found = lookup_knowledge(store, QUERY_TEXT, QUERY_VECTOR, category="near", mode=mode)
    assert (found.path, found.retried, found.filtered_result) == ("filtered", False, None)
    assert calls == {ENGINE_CALL[mode]: 1}
    assert not found.result.is_low_quality
    assert {b.category for b in found.result.blocks} == {"near"}


@MODES
def test_low_quality_filtered_result_retries_once_unfiltered(
    store: MilvusKnowledgeStore, calls: Counter[str], mode: str
) -> None:
    # In hybrid mode BM25 ranks the "far" chunks well (their text is the query); their dense distance
    # still makes them low quality, so the retry runs.
    found = lookup_knowledge(store, QUERY_TEXT, QUERY_VECTOR, category="far", mode=mode)
    assert (found.path, found.retried) == ("unfiltered_retry", True)
    assert calls == {ENGINE_CALL[mode]: 2}
    assert found.filtered_result is not None
    assert found.filtered_result.is_low_quality
    assert {b.category for b in found.filtered_result.blocks} == {"far"}
    assert not found.result.is_low_quality
    assert found.result.blocks[0].doc_id == "near-manual"
    assert found.result == post_process(found.candidates, store.settings)


def test_retry_result_is_used_even_when_it_is_also_low_quality(
    store: MilvusKnowledgeStore, calls: Counter[str]
) -> None:
    found = lookup_knowledge(store, QUERY_TEXT, NOWHERE, category="near", mode="dense")
    assert (found.path, found.retried) == ("unfiltered_retry", True)
    assert calls == {"search": 2}
    assert found.result.is_low_quality
    assert {c.category for c in found.candidates} >= {"far"}  # the unfiltered candidates, not the filtered


@MODES
def test_caps_apply_and_evidence_keys_are_unique(store: MilvusKnowledgeStore, mode: str) -> None:
    settings = Settings(return_n=4, max_chunks_per_document=2, retrieve_k=10)
    found = lookup_knowledge(store, QUERY_TEXT, QUERY_VECTOR, settings=settings, mode=mode)
    blocks = found.result.blocks
    assert len(blocks) == 4
    assert len(found.candidates) == 10
    keys = [b.evidence_key for b in blocks]
    assert len(set(keys)) == len(keys)
    assert Counter(b.doc_id for b in blocks)["near-manual"] == 2
    assert [b.original_rank for b in blocks] == sorted(b.original_rank for b in blocks)
    assert {d.reason for d in found.result.dropped} >= {"per_document_cap", "return_n"}


def test_mode_defaults_to_the_settings(store: MilvusKnowledgeStore, calls: Counter[str]) -> None:
    found = lookup_knowledge(store, QUERY_TEXT, QUERY_VECTOR, settings=Settings(search_mode="dense"))
    assert calls == {"search": 1}
    assert {c.score_label for c in found.candidates} == {"dense"}


def test_settings_rrf_k_reaches_the_engine(store: MilvusKnowledgeStore) -> None:
    found = lookup_knowledge(store, QUERY_TEXT, QUERY_VECTOR, settings=Settings(rrf_k=2), mode="hybrid")
    # At k = 60 no fused score exceeds 2/61; at k = 2 the top one is at least 1/3.
    assert found.candidates[0].score is not None
    assert found.candidates[0].score >= 1 / 3


def test_hints_only_explain(store: MilvusKnowledgeStore) -> None:
    plain = lookup_knowledge(store, QUERY_TEXT, QUERY_VECTOR, mode="hybrid")
    hinted = lookup_knowledge(
        store, QUERY_TEXT, QUERY_VECTOR, mode="hybrid", hints=L0Hints(keywords=("part",))
    )
    assert [b.evidence_key for b in hinted.result.blocks] == [b.evidence_key for b in plain.result.blocks]
    assert [b.quality_score for b in hinted.result.blocks] == [b.quality_score for b in plain.result.blocks]
    for block in hinted.result.blocks:
        matched = "part" in block.excerpt
        assert ("l0_keyword_overlap" in block.hit_reasons) == matched
    assert any("part" in b.excerpt for b in hinted.result.blocks)


def test_result_round_trips_through_camel_case_json(store: MilvusKnowledgeStore) -> None:
    found = lookup_knowledge(store, QUERY_TEXT, QUERY_VECTOR, category="far", mode="hybrid")
    text = found.model_dump_json(by_alias=True)
    assert '"filteredResult"' in text
    assert '"denseDistance"' in text
    assert LookupResult.model_validate_json(text) == found


def test_category_without_chunks_retries_unfiltered(store: MilvusKnowledgeStore, calls: Counter[str]) -> None:
    found = lookup_knowledge(store, QUERY_TEXT, QUERY_VECTOR, category="no-such-category", mode="hybrid")
    assert (found.path, found.retried) == ("unfiltered_retry", True)
    assert found.filtered_result is not None
    assert found.filtered_result.blocks == ()
    assert found.result.blocks
    assert calls == {"hybrid_search": 2}

"""The other engines this machine runs: Milvus Lite 2.5.1 (the C++ core, no nullable fields) and Milvus
2.3.5 (the Go server, no BM25, no hybrid search), installed into the kit's engine cache on first use.

One module on purpose: Milvus 2.3.5 always binds the same etcd port, so every test that starts it must
run in one process (pytest-xdist keeps a module on one worker).

The reference store on every engine: what it finds each engine supports, and that its replies are the
same wherever the engines can serve them (Lite 3.x of this venv is the yardstick; its replies are
checked from first principles in tests/integration/reference/store/test_store.py).

The kit on the other engines: every engine check, and the reference on a dense and a hybrid question of
each kind (search, lookup, a scenario outline with both modes): nothing is ERRORED anywhere; on 2.3.5 what
needs BM25 or hybrid search is NOT APPLICABLE with the engine's reason, and the dense questions pass.

`rag-conformance run --milvus <name>` on each of them, by the names every command takes; and the facts
the kit tells programs in prepare, measured on each engine, the 2.3.5 container of the image
`rag-conformance build-image` makes included (skipped, with the reason, where Docker cannot be had).
"""

from __future__ import annotations

import contextlib
import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from conformance.commands._runner import run_conformance
from reference import EngineFeatureError, Settings, lookup_knowledge
from reference.store._schema import ABSENT
from reference.store._store import MilvusKnowledgeStore
from tests.integration.reference.store.test_store import (
    CORPUS,
    DIM,
    ODD_CATEGORY,
    QUERY_TEXT,
    QUERY_VECTOR,
    K,
)
from tests.local_engines import client_to, local_engine_uri

# -- first, before this module starts its own servers: the engines by name, as every command takes them --


@pytest.mark.parametrize(
    ("name", "version"), [("milvus-2.3.5", "v2.3.5"), ("lite-2.5.1", "milvus_lite-2.5.1")]
)
def test_run_takes_each_local_engine_by_its_name(name: str, version: str, tmp_path: Path) -> None:
    # First in the module on purpose: `--milvus milvus-2.3.5` starts a server of its own, and only one
    # 2.3.5 runs on a machine at a time (the module's starts later, once this one has stopped).
    command = [sys.executable, "-m", "conformance.commands._cli", "run", "--milvus", name]
    command += ["-k", "dense-mode-labels-hits-as-dense", "--report", str(tmp_path)]
    result = subprocess.run(command, capture_output=True, text=True, timeout=600, check=False)
    assert result.returncode == 0, result.stdout[-2000:] + result.stderr[-2000:]
    milvus = json.loads((tmp_path / "report.json").read_text())["environment"]["milvus"]
    assert milvus["backend"] == name
    assert milvus["version"].startswith(version)


def test_milvus_2_2_16_to_2_3_5_in_place_runs_on_one_data_directory_and_says_what_it_found(
    tmp_path: Path,
) -> None:
    # Here, before the module's own 2.3.5 starts: both lines bind etcd's port 2380, one at a time.
    from conformance.engines import EngineUnavailableError
    from conformance.engines._lines import LOCAL_ENGINES
    from conformance.engines._local import ensure_venv

    for name in ("milvus-2.2.16", "milvus-2.3.5"):
        try:
            ensure_venv(LOCAL_ENGINES[name])
        except EngineUnavailableError as exc:
            pytest.skip(f"engine {name} cannot be installed here: {exc}")
    data = tmp_path / "data"
    data.mkdir()
    command = [sys.executable, "-m", "conformance.commands._cli", "upgrade", "--in-place-only"]
    command += ["--from", "milvus-2.2.16", "--to", "milvus-2.3.5", "--limit", "2", "--no-progress"]
    # 2.3.5 opens 2.2.16's data and answers as it did, once it serves: on the port the old server just
    # left (milvus-server moved to the next one, unsaid, where the port was in TIME_WAIT: CANNOT OPEN),
    # and after the old server's sessions expire (until then every search said "collection not loaded":
    # CHANGED). Both were the kit's findings, not the engine's; about a minute in all.
    command += ["--data-dir", str(data), "--out", str(tmp_path / "out"), "--open-timeout", "120"]
    result = subprocess.run(command, capture_output=True, text=True, timeout=900, check=False)
    written = tmp_path / "out" / "in-place.json"
    assert written.is_file(), result.stdout[-3000:] + result.stderr[-3000:]  # exit 2: it says why
    found = json.loads(written.read_text())
    last = result.stdout.strip().splitlines()[-1]
    assert last.startswith("verdict in place: UNCHANGED"), result.stdout + result.stderr[-3000:]
    assert result.returncode == 0, last
    assert found["old_version"].startswith("v2.2.16")
    assert found["new_version"].startswith("v2.3.5")
    assert found["data"].startswith(f"a copy of {data}")  # the data dir given is never written to
    assert list(data.iterdir()) == []
    [collection] = found["before"]
    assert collection["rows"] > 0
    assert [(c["name"], c["rows"], c["indexes"]) for c in found["after"]] == [
        (c["name"], c["rows"], c["indexes"]) for c in found["before"]
    ]
    assert any(collection["name"] in line for line in result.stdout.splitlines())


# -- the reference store on each engine -----------------------------------------------------------------

# engine -> the features its store lacks
LACKS = {"lite-3": set(), "lite-2.5.1": {"nullable"}, "milvus-2.3.5": {"nullable", "bm25"}}
CATEGORIES = [None, "news", ODD_CATEGORY, "nope", ABSENT]


def _open(engine: str, tmp: Path) -> MilvusKnowledgeStore:
    uri = str(tmp / "lite3.db") if engine == "lite-3" else local_engine_uri(engine)
    return MilvusKnowledgeStore.connect(uri, collection="engines_store", dim=DIM)


def _replies(store: MilvusKnowledgeStore) -> dict[tuple[str, str | None], Any]:
    """Every (mode, category) question's hits, or the typed error an engine without the mode gives."""
    out: dict[tuple[str, str | None], Any] = {}
    for mode in ("dense", "hybrid"):
        for category in CATEGORIES:
            try:
                hits = store.search(QUERY_TEXT, QUERY_VECTOR, mode=mode, k=K, category=category)
                out[mode, category] = hits
            except EngineFeatureError as exc:
                out[mode, category] = exc
    return out


@pytest.fixture(scope="module")
def stores(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, MilvusKnowledgeStore]]:
    opened: dict[str, MilvusKnowledgeStore] = {}
    yield opened
    for store in opened.values():
        store.drop()
        store.close()


@pytest.fixture(scope="module")
def lite3(stores: dict[str, MilvusKnowledgeStore], tmp_path_factory: pytest.TempPathFactory) -> Any:
    store = stores["lite-3"] = _open("lite-3", tmp_path_factory.mktemp("lite3"))
    store.drop()
    store.ingest(CORPUS)
    return _replies(store)


@pytest.fixture(scope="module", params=sorted(LACKS))
def engine(
    request: pytest.FixtureRequest, stores: dict[str, MilvusKnowledgeStore], tmp_path_factory: Any
) -> tuple[str, MilvusKnowledgeStore]:
    name = request.param
    if name not in stores:
        store = _open(name, tmp_path_factory.mktemp(name))
        store.drop()
        store.ingest(CORPUS)
        stores[name] = store
    return name, stores[name]


def _same_hits(got: list[Any], want: list[Any]) -> None:
    exact = ("evidence_key", "original_rank", "score_label", "text", "category", "source_type")
    assert [[getattr(h, f) for f in exact] for h in got] == [[getattr(h, f) for f in exact] for h in want]
    for g, w in zip(got, want, strict=True):
        assert g.score == pytest.approx(w.score, rel=1e-5, abs=1e-6)  # float32 on every engine
        assert (g.dense_distance is None) == (w.dense_distance is None)
        if w.dense_distance is not None:
            assert g.dense_distance == pytest.approx(w.dense_distance, rel=1e-5, abs=1e-6)


def test_the_store_finds_what_each_engine_lacks(engine: tuple[str, MilvusKnowledgeStore]) -> None:
    name, store = engine
    assert store.features is not None
    assert set(store.features.missing) == LACKS[name]
    reopened = MilvusKnowledgeStore(store.client, collection=store.collection, dim=DIM)
    reopened.ensure_collection()  # an existing collection: its schema says the same
    assert reopened.features is not None
    assert set(reopened.features.missing) == LACKS[name]


def test_replies_are_the_same_on_every_engine_that_can_serve_them(
    engine: tuple[str, MilvusKnowledgeStore], lite3: Any
) -> None:
    name, store = engine
    got = _replies(store)
    for (mode, category), want in lite3.items():
        if mode == "hybrid" and "bm25" in LACKS[name]:
            assert isinstance(got[mode, category], EngineFeatureError), (mode, category)
            assert got[mode, category].feature == "bm25"
            continue
        assert not isinstance(got[mode, category], Exception), got[mode, category]
        _same_hits(got[mode, category], want)
    assert any(h.category is None for h in got["dense", None])  # absent metadata came back as None
    assert got["dense", ABSENT] == got["dense", "nope"] == []  # the sentinel is never a category


def test_lookup_gives_the_same_evidence_on_every_engine(
    engine: tuple[str, MilvusKnowledgeStore], stores: dict[str, MilvusKnowledgeStore], lite3: Any
) -> None:
    _, store = engine
    settings = Settings(retrieve_k=K, return_n=3)
    for category in ("news", "nope"):
        got, want = (
            lookup_knowledge(s, QUERY_TEXT, QUERY_VECTOR, settings=settings, category=category, mode="dense")
            for s in (store, stores["lite-3"])
        )
        assert got.path == want.path
        assert [b.evidence_key for b in got.result.blocks] == [b.evidence_key for b in want.result.blocks]
        assert got.result.relevance_level == want.result.relevance_level


def test_a_docid_holding_a_quote_or_a_backslash_survives_a_hybrid_search_on_lite_2_5_1() -> None:
    """Lite 2.5.1 fetches a hybrid search's output fields with ``<pk> in ['<key>', ...]``, built from the
    hits' keys with quotes unescaped: a row key holding ``'`` or ``\\`` killed its server (SIGSEGV).
    The store's row keys hold neither, whatever the docId."""
    from reference.store._ingest import Chunk

    store = MilvusKnowledgeStore.connect(local_engine_uri("lite-2.5.1"), collection="engines_quotes", dim=DIM)
    docs = ["O'Reilly's", "C:\\temp\\new"]
    try:
        store.drop()
        store.ingest(
            Chunk(doc_id=doc, chunk_index=0, text=f"quoted harbor {i}", vector=QUERY_VECTOR)
            for i, doc in enumerate(docs)
        )
        hits = store.search("quoted harbor", QUERY_VECTOR, mode="hybrid", k=5)
        assert sorted(h.doc_id for h in hits) == sorted(docs)
        assert store.count() == len(docs)  # the engine still answers
    finally:
        store.drop()
        store.close()


# -- the kit on each engine ------------------------------------------------------------------------------

# The knowledge-base properties filter by every category of each kind, hostile ones too: on Lite 2.5.1
# the kit leaves out the one no literal matches there (a newline), and says so.
SELECT = (
    "rqs_engine_check or mode_labels_hits or mode_dense_still_callable or no_l2_enrichment_overwrite "
    "or good_filtered_lookup_does_not_retry or real_knowledge_base"
)
HYBRID_ONLY = {  # the selected implementation scenarios that ask in hybrid mode only
    "hybrid-mode-labels-hits-as-hybrid",
    "no-l2-enrichment-overwrite",
    "no-l2-enrichment-overwrite-lookup",
}
DENSE_ENGINE_CHECKS = {  # the engine checks that need neither BM25 nor hybrid search
    "engine-l2-is-squared-euclidean",
    "engine-dense-results-ascend-by-distance",
    "engine-dense-filter-keeps-matching-only",
    "engine-upsert-replaces",
}
# Engine questions asked of several searches, dense among them (features/engine/questions_users_ask.feature):
# on an engine without BM25 their dense examples pass and the others are not applicable, so each passes.
WITH_DENSE_EXAMPLES = {
    "engine-metric-direction-range-and-exact-match",
    "engine-several-queries-in-one-call",
    "engine-offset-skips-the-first-hits",
}


_REPORTS: dict[str, dict[str, Any]] = {}


def _report(engine: str, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """One run per engine and test session, shared by the tests below."""
    if engine not in _REPORTS:
        uri = local_engine_uri(engine)
        out = tmp_path_factory.mktemp(engine)
        outcome = run_conformance(milvus=f"uri:{uri}", report_dir=out, checks="all", select=SELECT)
        assert outcome.report is not None, f"no report (pytest exit code {outcome.pytest_exit_code})"
        _REPORTS[engine] = json.loads((Path(out) / "report.json").read_text())
    return _REPORTS[engine]


@pytest.fixture(scope="module", params=["lite-2.5.1", "milvus-2.3.5"])
def report(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    return _report(request.param, tmp_path_factory)


def _by_status(report: dict[str, Any]) -> dict[str, set[str]]:
    found: dict[str, set[str]] = {}
    for scenario in report["scenarios"]:
        found.setdefault(scenario["status"], set()).add(scenario["id"])
    return found


def test_nothing_errors_or_fails_and_the_reference_conforms(report: dict[str, Any]) -> None:
    statuses = _by_status(report)
    assert not statuses.get("errored"), [s for s in report["scenarios"] if s["status"] == "errored"]
    assert not statuses.get("failed"), [s for s in report["scenarios"] if s["status"] == "failed"]
    assert report["verdict"] == "CONFORMS"
    assert "good-filtered-lookup-does-not-retry" in statuses["passed"]  # its dense example, at least
    assert statuses["passed"] >= DENSE_ENGINE_CHECKS


def test_lite_2_5_1_serves_every_question_hybrid_included(tmp_path_factory: pytest.TempPathFactory) -> None:
    report = _report("lite-2.5.1", tmp_path_factory)
    assert report["environment"]["milvus"]["version"] == "milvus_lite-2.5.1"
    statuses = _by_status(report)
    assert set(statuses) == {"passed"}, statuses  # no n/a, and no expectation applies to the C++ core
    assert statuses["passed"] >= HYBRID_ONLY
    lookup = next(s for s in report["scenarios"] if s["id"] == "prop-lookup-on-a-real-knowledge-base")
    assert any("not asked as a category filter: 'line\\nbreak'" in n for n in lookup["notes"]), lookup


def test_milvus_2_3_makes_what_needs_bm25_not_applicable_with_the_engines_reason(
    tmp_path_factory: pytest.TempPathFactory,
) -> None:
    report = _report("milvus-2.3.5", tmp_path_factory)
    assert report["environment"]["milvus"]["version"].startswith("v2.3.5")
    scenarios = {s["id"]: s for s in report["scenarios"]}
    not_applicable = _by_status(report)["not_applicable"]
    assert not_applicable >= HYBRID_ONLY
    for scenario_id in HYBRID_ONLY:
        message = scenarios[scenario_id]["message"]
        assert "mode 'hybrid' cannot run on this engine, which has no BM25" in message
    assert {"dense-mode-labels-hits-as-dense", "mode-dense-still-callable"} <= _by_status(report)["passed"]
    engine_checks = {s["id"] for s in report["scenarios"] if s["engine_check"]}
    assert _by_status(report)["passed"] >= WITH_DENSE_EXAMPLES
    assert engine_checks - DENSE_ENGINE_CHECKS - WITH_DENSE_EXAMPLES <= not_applicable
    for scenario_id in engine_checks - DENSE_ENGINE_CHECKS - WITH_DENSE_EXAMPLES:
        assert "has no" in scenarios[scenario_id]["message"], scenarios[scenario_id]


def test_a_second_milvus_2_3_is_refused_at_once_naming_the_port(tmp_path: Path) -> None:
    import contextlib
    import socket

    from conformance.engines import EngineUnavailableError
    from conformance.engines._local import LOCAL_ENGINES, LocalServer

    spec = LOCAL_ENGINES["milvus-2.3.5"]
    (port,) = spec.fixed_ports
    holder = socket.socket()
    try:
        # If someone on this machine holds it already, the refusal below is the same.
        with contextlib.suppress(OSError):
            holder.bind(("127.0.0.1", port))
        with pytest.raises(EngineUnavailableError, match=rf"always binds port {port}.*one can run at a time"):
            LocalServer(spec, tmp_path / "no-venv-needed")  # refused before anything starts
    finally:
        holder.close()


# -- the facts the kit tells programs in prepare (docs/engines.md), measured on each engine ------------


@pytest.mark.parametrize("engine", ["lite-3", "lite-2.5.1", "milvus-2.3.5", "container-2.3.5"])
def test_the_engine_facts_prepare_carries_are_what_the_engine_does(engine: str, tmp_path: Path) -> None:
    from conformance.engines._facts import ESCAPED_LITERAL, NO_UNICODE_ESCAPE_LITERAL, engine_facts
    from tests.engine_facts import PROBED_INDEXES, REFUSED, measured

    with contextlib.ExitStack() as stack:
        if engine == "container-2.3.5":  # the image build-image makes, through testcontainers
            from conformance.engines import start_engine
            from tests.container_image import built_image

            uri = stack.enter_context(start_engine(f"container:{built_image()}")).endpoint.uri
        else:
            uri = str(tmp_path / "facts.db") if engine == "lite-3" else local_engine_uri(engine)
        client = client_to(uri)
        try:
            version = client.get_server_version()
            stated = engine_facts(version)
            found, literals = measured(client, version=version)
        finally:
            client.close()
    assert stated.engine != "unknown", version
    for fact in ("hybrid_search", "bm25", "bm25_scores", "filter_templates", "nullable_fields"):
        assert getattr(found, fact) == getattr(stated, fact), (fact, version)
    assert set(found.index_types) == set(stated.index_types) & set(PROBED_INDEXES), version
    # The recipe for category literals (json.dumps(c, ensure_ascii=False)) finds each category's own
    # chunk, or (where the engine does not read \n) every category but the one holding a newline; the
    # \uXXXX forms of json.dumps's and Gson's defaults are refused, match nothing, or work, as stated.
    newline = [3] if stated.newline_categories else []
    assert stated.newline_categories == (stated.filter_literals != ESCAPED_LITERAL), version
    escaped = {NO_UNICODE_ESCAPE_LITERAL: (REFUSED, REFUSED), ESCAPED_LITERAL: ([], [])}.get(
        stated.filter_literals, ([4], [5])
    )
    assert literals == {
        "quotes": [1],
        "backslash": [2],
        "newline": newline,
        "non_ascii": [4],
        "html": [5],
        "escaped_non_ascii": escaped[0],
        "escaped_html": escaped[1],
    }, version

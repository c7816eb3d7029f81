"""Every ``rqs_*`` fixture of the kit, in one place: what a scenario (or a user's own test) may ask for.

Session-scoped, in the order a run makes them (``docs/architecture.md``, "How data flows in a run"):

- ``rqs_adapter_address``, ``rqs_implementation``, ``rqs_info``: the implementation under judgement, loaded
  once (:class:`~conformance.scenarios._resources.RunResources`);
- ``rqs_engine``: the Milvus the kit provisions, every collection under the run's prefix;
- ``rqs_recorder``, ``rqs_adapter_endpoint``: the recording proxy, and the endpoint the implementation is
  handed (the engine's, through the proxy), so steps can see what it asked Milvus;
- ``rqs_scenario_corpus``, ``rqs_oracle``, ``rqs_corpus``: the corpus (with the run's knowledge base),
  the kit's own oracle collection, and the corpus once the implementation has prepared it;
- ``rqs_advisor``, ``rqs_judge_memory``: advice and what the judges learn once per run.

Per scenario: ``rqs_judge`` (the one call site, see :mod:`conformance.judging._judge`),
``rqs_property_run`` (the run's seed and example count), ``rqs_knowledge_base``; and two autouse
checks: a capability the implementation does not declare makes the scenario NOT APPLICABLE, and a
known divergence (``conformance/engines/expectations``) makes it a strict expected failure.

Registered by :mod:`conformance.plugin`. Nothing here starts before a scenario asks for it.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import TYPE_CHECKING, Any

import pytest

from ..boundary._asking import ask
from ..boundary._decline import NOT_APPLICABLE_PREFIX
from ..boundary._errors import ConformanceError
from ..boundary._protocol import Implementation, ImplementationInfo
from ..corpus._knowledge_base import KnowledgeBase
from ..corpus._scenario_corpus import ScenarioCorpus, build_corpus
from ..engines._expectations import ExpectationError, load_expectations, shipped_files
from ..engines._facts import engine_facts
from ..judging._advice import Advisor
from ..judging._judge import Judge
from ..judging._oracle import MilvusOracle
from ..options import RunOptions
from ..reporting._outcomes import NOTES, OutcomeCollector
from ._profiles import PROPERTY_PROFILES
from ._resources import RunResources
from .steps._property_run import PropertyRun

if TYPE_CHECKING:
    from ..boundary._protocol import MilvusEndpoint
    from ..engines._proxy import RecordingProxy

__all__ = [
    "rqs_adapter_address",
    "rqs_adapter_endpoint",
    "rqs_advisor",
    "rqs_corpus",
    "rqs_engine",
    "rqs_implementation",
    "rqs_info",
    "rqs_judge",
    "rqs_judge_memory",
    "rqs_knowledge_base",
    "rqs_oracle",
    "rqs_property_run",
    "rqs_recorder",
    "rqs_scenario_corpus",
]

ORACLE_SUFFIX = "kit_oracle"
_EXPECTATIONS = pytest.StashKey[tuple[Any, ...]]()


def pytest_configure(config: pytest.Config) -> None:
    extra: Sequence[str] = RunOptions.of(config).expectations
    try:
        config.stash[_EXPECTATIONS] = load_expectations([*shipped_files(), *extra])
    except ExpectationError as exc:
        raise pytest.UsageError(str(exc)) from None


# -- the implementation and the engine ---------------------------------------------------------------


@pytest.fixture(scope="session")
def rqs_adapter_address(pytestconfig: pytest.Config) -> str:
    """The adapter address this run judges."""
    return pytestconfig.stash[RunResources.key].adapter_address


@pytest.fixture(scope="session")
def _rqs_loaded(request: pytest.FixtureRequest, pytestconfig: pytest.Config) -> Iterator[tuple[Any, Any]]:
    resources = pytestconfig.stash[RunResources.key]
    implementation, info = resources.adapter()
    if info.needs_milvus:
        # The implementation keeps collections in the engine and reaches it through the recording
        # proxy: both must outlive its close(), so they are set up first and torn down after it.
        request.getfixturevalue("rqs_adapter_endpoint")
    try:
        yield implementation, info
    finally:
        resources.close_adapter()


@pytest.fixture(scope="session")
def rqs_implementation(_rqs_loaded: tuple[Any, Any]) -> Any:
    """The implementation under judgement (satisfies :class:`conformance.Implementation`)."""
    return _rqs_loaded[0]


@pytest.fixture(scope="session")
def rqs_info(_rqs_loaded: tuple[Any, Any]) -> Any:
    """What the implementation says about itself: name, version, capabilities."""
    return _rqs_loaded[1]


@pytest.fixture(scope="session")
def rqs_engine(pytestconfig: pytest.Config) -> Iterator[Any]:
    """The Milvus the kit provisions for this run; every collection in it carries the run's prefix."""
    resources = pytestconfig.stash[RunResources.key]
    try:
        yield resources.engine()
    finally:
        resources.close_engine()


@pytest.fixture(scope="session")
def rqs_recorder(pytestconfig: pytest.Config, rqs_engine: Any) -> Iterator[RecordingProxy]:
    """The session's recording proxy in front of the engine the kit provisioned (the engine watch reads
    it too: a ``prepare`` that failed while the engine answered errors is the engine's)."""
    from ..engines._proxy import RecordingProxy

    resources = pytestconfig.stash[RunResources.key]
    proxy = RecordingProxy(rqs_engine.endpoint.uri)
    proxy.start()
    resources.recorder = proxy
    try:
        yield proxy
    finally:
        resources.recorder = None
        proxy.close()


@pytest.fixture(scope="session")
def rqs_adapter_endpoint(rqs_engine: Any, rqs_recorder: RecordingProxy) -> MilvusEndpoint:
    """Where the implementation finds Milvus: the engine's endpoint, reached through the proxy (the
    kit's own oracle connects directly, so the record holds the implementation's calls only), with
    what the kit knows of the engine (its version, API level, what it lacks: ``docs/engines.md``)."""
    endpoint: MilvusEndpoint = rqs_engine.endpoint
    facts = engine_facts(str(rqs_engine.describe().get("version")))
    return endpoint.model_copy(update={"uri": rqs_recorder.uri, "engine": facts})


# -- the corpus and the oracle -----------------------------------------------------------------------


@pytest.fixture(scope="session")
def rqs_scenario_corpus(pytestconfig: pytest.Config) -> ScenarioCorpus:
    """The kit's scenario corpus and its named questions, with the knowledge base generated from the
    run's seed (pure data, no engine needed; ``--rqs-seed`` replays it)."""
    return build_corpus(seed=RunOptions.of(pytestconfig).seed or 0)


@pytest.fixture(scope="session")
def rqs_oracle(
    pytestconfig: pytest.Config, rqs_engine: Any, rqs_scenario_corpus: ScenarioCorpus
) -> Iterator[MilvusOracle]:
    """The kit's own oracle: the corpus in the kit's collection, answered from first principles.

    It builds on every engine; on one without BM25 it says so (``lacks``), and hybrid-mode questions
    are then NOT APPLICABLE while dense-mode ones run.
    """
    oracle = MilvusOracle.ingest(
        rqs_engine.client(),
        rqs_engine.collection_name(ORACLE_SUFFIX),
        rqs_scenario_corpus,
        engine=rqs_engine.endpoint.uri,
        seal=rqs_engine.server_version().startswith("milvus_lite"),
    )
    made = pytestconfig.stash[RunResources.key].kit_collections
    name = rqs_engine.collection_name(ORACLE_SUFFIX)
    made.add(name)
    try:
        yield oracle
    finally:
        made.discard(name)
        oracle.drop()


@pytest.fixture(scope="session")
def rqs_corpus(
    rqs_implementation: Implementation,
    rqs_info: ImplementationInfo,
    rqs_adapter_endpoint: Any,
    rqs_oracle: MilvusOracle,
    rqs_scenario_corpus: ScenarioCorpus,
) -> ScenarioCorpus:
    """The scenario corpus, prepared once per session in the implementation (and in the oracle).

    The implementation reaches Milvus through the recording proxy (``rqs_adapter_endpoint``), so steps
    can check what it asked the engine; the oracle connects directly and stays out of the record.
    """
    if not rqs_info.needs_milvus:
        # The capability check skips such scenarios first; this guards a scenario that forgot its tag.
        pytest.fail(
            f"kit bug: a scenario asked for the Milvus corpus, but {rqs_info.name!r} declares neither "
            "'search' nor 'lookup'; tag the scenario @needs:search or @needs:lookup"
        )
    ask(rqs_implementation, "prepare", rqs_adapter_endpoint, rqs_scenario_corpus.corpus)
    return rqs_scenario_corpus


@pytest.fixture
def rqs_knowledge_base(
    request: pytest.FixtureRequest, rqs_corpus: ScenarioCorpus, rqs_adapter_endpoint: MilvusEndpoint
) -> KnowledgeBase:
    """The generated part of the corpus the implementation prepared, as requests filter it on this
    engine: a category no filter literal can match there is not asked (the scenario notes which)."""
    if rqs_corpus.knowledge_base is None:
        raise ConformanceError("kit bug: the run's corpus was built without its knowledge base (no seed)")
    full, facts = rqs_corpus.knowledge_base, rqs_adapter_endpoint.engine
    kb = full.filtered_on(facts)
    if facts is not None and (unasked := [c for c in full.categories if c not in kb.categories]):
        request.node.stash.setdefault(NOTES, []).append(
            f"not asked as a category filter: {', '.join(map(repr, unasked))}; no literal matches a "
            f"newline on {facts.version} ({facts.docs})"
        )
    return kb


# -- the judge ------------------------------------------------------------------------------------------


@pytest.fixture(scope="session")
def rqs_judge_memory() -> dict[str, Any]:
    """What the judges of a run learn once about the implementation (its hybrid mode's collections)."""
    return {}


@pytest.fixture(scope="session")
def rqs_advisor(pytestconfig: pytest.Config) -> Iterator[Advisor]:
    """Sees every question and reply of the run; at its end, its advice goes into the report."""
    advisor = Advisor()
    yield advisor
    collector = pytestconfig.stash.get(OutcomeCollector.key, None)
    if collector is not None:
        for text in advisor.advice():
            collector.advise(text)


@pytest.fixture
def rqs_judge(
    request: pytest.FixtureRequest,
    rqs_implementation: Implementation,
    rqs_info: ImplementationInfo,
    rqs_advisor: Advisor,
    rqs_judge_memory: dict[str, Any],
) -> Judge:
    """Asks the implementation; raises a FAILED-scenario error naming the requirement a reply breaks.

    Search and lookup reach the oracle and the recording proxy only when asked, so pure scenarios start
    no engine.
    """
    notes = request.node.stash.setdefault(NOTES, [])

    def oracle() -> Any:
        request.getfixturevalue("rqs_corpus")  # the implementation has the corpus before it is asked
        return request.getfixturevalue("rqs_oracle")

    def recorder() -> Any:
        return request.getfixturevalue("rqs_recorder")

    return Judge(
        rqs_implementation,
        rqs_info,
        oracle=oracle,
        recorder=recorder,
        notes=notes,
        observe=rqs_advisor.observe,
        memory=rqs_judge_memory,
    )


@pytest.fixture
def rqs_property_run(pytestconfig: pytest.Config) -> PropertyRun:
    """This run's seed (recorded in the report) and the example count of ``--rqs-profile``."""
    options = RunOptions.of(pytestconfig)
    profile = options.profile or "ci"
    return PropertyRun(
        seed=options.seed or 0,
        profile=profile,
        max_examples=PROPERTY_PROFILES[profile],
        shrink=profile != "selftest",
    )


# -- the checks every scenario passes --------------------------------------------------------------


@pytest.fixture(autouse=True)
def _rqs_capability_check(request: pytest.FixtureRequest) -> None:
    needed = [m.args[0] for m in request.node.iter_markers("rqs_needs")]
    if not needed:
        return
    info = request.getfixturevalue("rqs_info")
    missing = [c for c in needed if not info.supports(c)]
    if missing:
        noun = "capability" if len(missing) == 1 else "capabilities"
        pytest.skip(
            f"{NOT_APPLICABLE_PREFIX}implementation {info.name!r} does not declare {noun} "
            f"{', '.join(repr(c) for c in missing)}"
        )


@pytest.fixture(autouse=True)
def _rqs_expected_failures(request: pytest.FixtureRequest) -> None:
    marker = request.node.get_closest_marker("rqs_id")
    if marker is None or not marker.args:
        return
    candidates = [e for e in request.config.stash.get(_EXPECTATIONS, ()) if e.scenario == marker.args[0]]
    if not candidates:
        return
    engine_version = adapter_name = None
    if any(e.engine is not None for e in candidates):
        # The version the engine reported at start, as in the report: no extra call to the engine.
        engine_version = str(request.getfixturevalue("rqs_engine").describe().get("version"))
    if any(e.adapter is not None for e in candidates):
        adapter_name = request.getfixturevalue("rqs_info").name
    for expectation in candidates:
        if expectation.applies(engine_version=engine_version, adapter_name=adapter_name):
            request.applymarker(pytest.mark.xfail(strict=True, reason=expectation.marker_reason()))
            return

"""Session fixtures of the Milvus-backed scenarios: the scenario corpus, loaded once, and the oracle.

Order of a run (architecture, "How data flows in a run"): the plugin's ``rqs_engine`` gives a Milvus with
a per-run prefix; the kit builds the corpus, ingests it into its own oracle collection with raw pymilvus,
and hands the same corpus once to the implementation's ``prepare``.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from .._calls import ask
from .._corpus import ScenarioCorpus, build_corpus
from .._oracle import MilvusOracle
from .._protocol import Implementation, ImplementationInfo
from ..reporting._outcomes import OutcomeCollector

__all__ = ["rqs_corpus", "rqs_oracle"]

ORACLE_SUFFIX = "kit_oracle"


@pytest.fixture(scope="session")
def rqs_scenario_corpus(pytestconfig: pytest.Config) -> ScenarioCorpus:
    """The kit's scenario corpus and its named questions, with the knowledge base generated from the
    run's seed (pure data, no engine needed; ``--rqs-seed`` replays it)."""
    seed = pytestconfig.stash[OutcomeCollector.key].hypothesis_seed
    return build_corpus(seed=int(seed or 0))


@pytest.fixture(scope="session")
def rqs_oracle(rqs_engine: Any, rqs_scenario_corpus: ScenarioCorpus) -> Iterator[MilvusOracle]:
    """The kit's own oracle: the corpus in the kit's collection, answered from first principles.

    It builds on every engine; on one without BM25 it says so (``lacks``), and hybrid-mode questions
    are then NOT APPLICABLE while dense-mode ones run.
    """
    oracle = MilvusOracle.ingest(
        rqs_engine.client(), rqs_engine.collection_name(ORACLE_SUFFIX), rqs_scenario_corpus
    )
    try:
        yield oracle
    finally:
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
        # The capability gate skips such scenarios first; this guards a scenario that forgot its tag.
        pytest.fail(
            f"kit bug: a scenario asked for the Milvus corpus, but {rqs_info.name!r} declares neither "
            "'search' nor 'lookup'; tag the scenario @needs:search or @needs:lookup"
        )
    ask(rqs_implementation, "prepare", rqs_adapter_endpoint, rqs_scenario_corpus.corpus)
    return rqs_scenario_corpus

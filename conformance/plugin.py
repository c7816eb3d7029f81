"""pytest plugin of the conformance kit (registered through the ``pytest11`` entry point).

Importing it stays cheap: no pymilvus, no engine, no adapter. Those start in fixtures, on first use.
"""

from __future__ import annotations

import importlib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from ._errors import ConformanceError
from ._recorder import Recorder
from ._report import NOT_APPLICABLE_PREFIX
from .steps import STEP_MODULES

GROUP = "rag-conformance"
OPT_ADAPTER = "--rqs-adapter"
OPT_MILVUS = "--rqs-milvus"
OPT_REPORT = "--rqs-report"
SUITE_DIR = Path(__file__).resolve().parent / "_suite"

# Gherkin tag prefix -> marker. "@id:x" becomes @pytest.mark.rqs_id("x"), and so on.
TAG_MARKERS = {
    "id": ("rqs_id", "stable scenario id, the key of every report"),
    "req": ("rqs_req", "the spec requirement a scenario belongs to"),
    "needs": ("rqs_needs", "a capability the implementation must declare, else NOT APPLICABLE"),
    "spec": ("rqs_spec", "hash of the spec scenario text the Gherkin transcribes (drift check)"),
}
FLAG_MARKERS = {
    "derived": ("rqs_derived", "derived from the design note or requirement prose, not a spec scenario"),
    "property": ("rqs_property", "a property checked over generated inputs by Hypothesis"),
    "engine": ("rqs_engine_check", "a check of Milvus engine behaviour, not of an implementation"),
}


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup(GROUP, "rag-retrieval-quality-score conformance kit")
    group.addoption(
        OPT_ADAPTER,
        default=None,
        help="implementation to judge: 'reference' (default), an entry-point name, or 'module:attr'; "
        "giving it also selects the kit's scenarios",
    )
    group.addoption(
        OPT_MILVUS,
        default="lite",
        help="Milvus backend: lite | uri:<uri> | container[:image] (default: lite)",
    )
    group.addoption(OPT_REPORT, default=None, help="write report.json and junit.xml into this directory")


def pytest_load_initial_conftests(
    early_config: pytest.Config, parser: pytest.Parser, args: list[str]
) -> None:
    # `pytest --rqs-adapter X` with no paths runs the kit's scenarios, wherever the kit is installed.
    known = early_config.known_args_namespace
    if getattr(known, "rqs_adapter", None) and not getattr(known, "file_or_dir", None):
        args.append(str(SUITE_DIR))


@pytest.hookimpl(tryfirst=True)
def pytest_configure(config: pytest.Config) -> None:
    for name, doc in (*TAG_MARKERS.values(), *FLAG_MARKERS.values()):
        config.addinivalue_line("markers", f"{name}: {doc}")
    for module in STEP_MODULES:
        if not config.pluginmanager.has_plugin(module):
            config.pluginmanager.register(importlib.import_module(module), module)
    report_dir = config.getoption(OPT_REPORT)
    if report_dir and not getattr(config.option, "xmlpath", None):
        Path(report_dir).mkdir(parents=True, exist_ok=True)
        config.option.xmlpath = str(Path(report_dir) / "junit.xml")
    config.pluginmanager.register(Recorder(config, report_dir), "rqs-recorder")


def pytest_bdd_apply_tag(tag: str, function: Any) -> Any:
    prefix, sep, value = tag.partition(":")
    if sep and prefix in TAG_MARKERS:
        return getattr(pytest.mark, TAG_MARKERS[prefix][0])(value)(function)
    if not sep and tag in FLAG_MARKERS:
        return getattr(pytest.mark, FLAG_MARKERS[tag][0])(function)
    return None  # pytest-bdd's default: a marker of that name, which --strict-markers checks


# -- fixtures --------------------------------------------------------------------------------------


@pytest.fixture(scope="session")
def rqs_adapter_spec(pytestconfig: pytest.Config) -> str:
    """The adapter spec this run judges."""
    return pytestconfig.getoption(OPT_ADAPTER) or "reference"


@pytest.fixture(scope="session")
def _rqs_loaded(pytestconfig: pytest.Config, rqs_adapter_spec: str) -> Iterator[tuple[Any, Any]]:
    from ._loading import load_adapter

    implementation, info = load_adapter(rqs_adapter_spec)
    pytestconfig.stash[Recorder.key].adapter = info
    try:
        yield implementation, info
    finally:
        implementation.close()


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
    from .engines import start_engine

    engine = start_engine(pytestconfig.getoption(OPT_MILVUS))
    try:
        pytestconfig.stash[Recorder.key].milvus = engine.describe()
        yield engine
    finally:
        engine.close()


@pytest.fixture(autouse=True)
def _rqs_capability_gate(request: pytest.FixtureRequest) -> None:
    needed = [m.args[0] for m in request.node.iter_markers("rqs_needs")]
    if not needed:
        return
    try:
        info = request.getfixturevalue("rqs_info")
    except ConformanceError:
        raise  # an adapter that cannot load: the scenario is ERRORED, with the reason
    missing = [c for c in needed if c not in {str(x) for x in info.capabilities}]
    if missing:
        pytest.skip(
            f"{NOT_APPLICABLE_PREFIX}implementation {info.name!r} does not declare capability "
            f"{', '.join(repr(c) for c in missing)}"
        )

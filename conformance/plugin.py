"""pytest plugin of the conformance kit (registered through the ``pytest11`` entry point).

Importing it stays cheap: no pymilvus, no engine, no adapter. When the kit's scenarios are selected,
the adapter is loaded and the engine reached once collection is done, before the first scenario: if
either fails, the run stops with one usage error and a NOT JUDGED report (see
:mod:`conformance.scenarios._resources`). An engine lost midway makes the scenarios needing it NOT
JUDGED, not failed (:mod:`conformance.scenarios._engine_watch`).
"""

from __future__ import annotations

import importlib
import os
import random
from pathlib import Path
from typing import Any

import pytest

from .reporting._outcomes import OutcomeCollector
from .scenarios import PLUGIN_MODULES
from .scenarios._bdd_step_cache import install as install_step_lookup_cache
from .scenarios._engine_watch import EngineWatch
from .scenarios._profiles import PROFILE_ENV, PROPERTY_PROFILES
from .scenarios._resources import RunResources
from .scenarios._suite import SUITE_DIR

GROUP = "rag-conformance"
OPT_ADAPTER = "--rqs-adapter"
OPT_MILVUS = "--rqs-milvus"
OPT_REPORT = "--rqs-report"
OPT_SEED = "--rqs-seed"
OPT_PROFILE = "--rqs-profile"
OPT_ADAPTER_CMD = "--rqs-adapter-cmd"
OPT_ADAPTER_TIMEOUT = "--rqs-adapter-timeout"
OPT_VALIDATE = "--rqs-validate"
OPT_STRICT_STDOUT = "--rqs-strict-stdout"
OPT_CHECKS = "--rqs-checks"
OPT_EXPECTATIONS = "--rqs-expectations"

CHECKS = ("implementation", "engine", "all")

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
    group.addoption(
        OPT_EXPECTATIONS,
        action="append",
        default=[],
        metavar="FILE",
        help="TOML file of known divergences ([[expected_failure]] scenario, reason, adapter and/or "
        "engine): each runs as a strict expected failure; repeatable. The kit's engine ones always apply",
    )
    group.addoption(
        OPT_CHECKS,
        choices=CHECKS,
        default="implementation",
        help="which scenarios run: 'implementation' (default: the spec's, judging the adapter), "
        "'engine' (Milvus behaviour checks, @engine), or 'all'",
    )
    group.addoption(
        OPT_SEED,
        type=int,
        default=None,
        help="Hypothesis seed of the property scenarios; pass the one a report shows to replay that run "
        "(default: a random seed, chosen once per run and recorded in the report)",
    )
    group.addoption(
        OPT_PROFILE,
        choices=sorted(PROPERTY_PROFILES),
        default=os.environ.get(PROFILE_ENV) or "ci",
        help="examples per property scenario: "
        + ", ".join(f"{name} {count}" for name, count in PROPERTY_PROFILES.items())
        + f" (default: ${PROFILE_ENV} if set, else ci)",
    )
    group.addoption(
        OPT_ADAPTER_CMD,
        default=None,
        help="judge a program in any language speaking the stdio protocol, e.g. 'node impl.js' "
        "(the same as --rqs-adapter 'cmd:<command>')",
    )
    group.addoption(
        OPT_ADAPTER_TIMEOUT,
        type=float,
        default=30.0,
        help="seconds each call to a stdio implementation may take before it is killed (default: 30)",
    )
    group.addoption(
        OPT_VALIDATE,
        action="store_true",
        default=False,
        help="also check every line the kit writes to a stdio implementation against the protocol models",
    )
    group.addoption(
        OPT_STRICT_STDOUT,
        action="store_true",
        default=False,
        help="a stdio implementation's stdout line that is not a reply errors the call that waited for "
        "it (default: skipped, and listed once as a warning in the report)",
    )


def pytest_load_initial_conftests(
    early_config: pytest.Config, parser: pytest.Parser, args: list[str]
) -> None:
    # `pytest --rqs-adapter X` with no paths runs the kit's scenarios, wherever the kit is installed.
    known = early_config.known_args_namespace
    chosen = getattr(known, "rqs_adapter", None) or getattr(known, "rqs_adapter_cmd", None)
    if chosen and not getattr(known, "file_or_dir", None):
        args.append(str(SUITE_DIR))


@pytest.hookimpl(tryfirst=True)
def pytest_configure(config: pytest.Config) -> None:
    if config.getoption(OPT_PROFILE) not in PROPERTY_PROFILES:  # a bad $RQS_PROFILE passes argparse
        raise pytest.UsageError(
            f"{PROFILE_ENV}={os.environ.get(PROFILE_ENV)!r} is not a property profile; use one of "
            f"{', '.join(sorted(PROPERTY_PROFILES))}"
        )
    for name, doc in (*TAG_MARKERS.values(), *FLAG_MARKERS.values()):
        config.addinivalue_line("markers", f"{name}: {doc}")
    install_step_lookup_cache()
    for module in PLUGIN_MODULES:
        if not config.pluginmanager.has_plugin(module):
            config.pluginmanager.register(importlib.import_module(module), module)
    # The OutcomeCollector writes report.json and junit.xml (one suite per requirement) into the report dir.
    report_dir = config.getoption(OPT_REPORT)
    outcomes = OutcomeCollector(config, report_dir)
    config.pluginmanager.register(outcomes, "rqs-outcomes")
    _keep_hypothesis_out_of_cwd(config)
    # One seed per run, recorded before any scenario runs, so every report can be replayed.
    seed = config.getoption(OPT_SEED)
    outcomes.hypothesis_seed = random.getrandbits(32) if seed is None else seed
    resources = RunResources(
        config,
        adapter_address=_adapter_address(config),
        milvus=config.getoption(OPT_MILVUS),
        stdio_options={
            "timeout": config.getoption(OPT_ADAPTER_TIMEOUT),
            "validate": config.getoption(OPT_VALIDATE),
            "strict_stdout": config.getoption(OPT_STRICT_STDOUT),
            "on_warning": outcomes.warn,
        },
    )
    config.pluginmanager.register(EngineWatch(resources, outcomes), "rqs-engine-watch")


_HYPOTHESIS_HOME = pytest.StashKey[bool]()


def _keep_hypothesis_out_of_cwd(config: pytest.Config) -> None:
    """Hypothesis keeps a storage directory (``.hypothesis/``, its constants cache even with the
    property scenarios' ``database=None``) in the working directory; a judging run puts it under the
    report directory, or the user's cache without one. ``HYPOTHESIS_STORAGE_DIRECTORY`` wins, and a
    pytest run that does not judge (no report, no adapter) is left as it is."""
    if os.environ.get("HYPOTHESIS_STORAGE_DIRECTORY"):
        return
    report_dir = config.getoption(OPT_REPORT)
    if report_dir:
        home = Path(report_dir) / ".hypothesis"
    elif config.getoption(OPT_ADAPTER) or config.getoption(OPT_ADAPTER_CMD):
        cache = os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache"
        home = Path(cache) / "rag-conformance" / "hypothesis"
    else:
        return
    from hypothesis.configuration import set_hypothesis_home_dir

    set_hypothesis_home_dir(home.resolve())
    config.stash[_HYPOTHESIS_HOME] = True


def pytest_unconfigure(config: pytest.Config) -> None:
    if config.stash.get(_HYPOTHESIS_HOME, False):  # back to Hypothesis's own choice, for what runs next
        from hypothesis.configuration import set_hypothesis_home_dir

        set_hypothesis_home_dir(None)


def _adapter_address(config: pytest.Config) -> str:
    command = config.getoption(OPT_ADAPTER_CMD)
    if command:
        return f"cmd:{command}"
    return config.getoption(OPT_ADAPTER) or "reference"


def pytest_itemcollected(item: pytest.Item) -> None:
    # `-k dense-quality-from-l2` selects by the report's own scenario id, as `-k dense_quality_from_l2`
    # does by the test's name: the id becomes one of the item's keywords (matched as -k matches names).
    scenario_id = item.get_closest_marker("rqs_id")
    if scenario_id is not None and scenario_id.args:
        item.extra_keyword_matches.add(str(scenario_id.args[0]))


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    # An implementation's verdict must not depend on engine quirks, so engine checks run on request.
    checks = config.getoption(OPT_CHECKS)
    if checks == "all":
        return
    want_engine = checks == "engine"
    keep, drop = [], []
    for item in items:
        if item.get_closest_marker("rqs_id") is None:
            keep.append(item)  # not a kit scenario: none of our business
        elif (item.get_closest_marker("rqs_engine_check") is not None) == want_engine:
            keep.append(item)
        else:
            drop.append(item)
    if drop:
        config.hook.pytest_deselected(items=drop)
        items[:] = keep


def pytest_collection_finish(session: pytest.Session) -> None:
    # Load the adapter and reach the engine now, so a run that cannot judge stops before its first
    # scenario with one message, instead of erroring every scenario with the same cause.
    if session.config.option.collectonly:
        return
    resources = session.config.stash.get(RunResources.key, None)
    if resources is not None:
        resources.preflight(session.items)


def pytest_sessionfinish(session: pytest.Session) -> None:
    # Normally the session fixtures have closed both already; this covers runs that never used them.
    resources = session.config.stash.get(RunResources.key, None)
    if resources is not None:
        resources.close()


# tryfirst: the hook is firstresult, and pytest-bdd's own impl (any tag -> a marker of that name) must
# not answer first; which plugin entry point loads first depends on the install, not on us.
@pytest.hookimpl(tryfirst=True)
def pytest_bdd_apply_tag(tag: str, function: Any) -> Any:
    prefix, sep, value = tag.partition(":")
    if sep and prefix in TAG_MARKERS:
        return getattr(pytest.mark, TAG_MARKERS[prefix][0])(value)(function)
    if not sep and tag in FLAG_MARKERS:
        return getattr(pytest.mark, FLAG_MARKERS[tag][0])(function)
    return None  # pytest-bdd's default: a marker of that name, which --strict-markers checks

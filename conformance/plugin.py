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
from pathlib import Path
from typing import Any

import pytest

from .options import RunOptions, add_pytest_options
from .reporting._outcomes import OutcomeCollector
from .reporting._writing import REPORT_FILES, output_dir_problem
from .scenarios import ENGINE_HELP, PLUGIN_MODULES
from .scenarios._bdd_step_cache import install as install_step_lookup_cache
from .scenarios._engine_watch import EngineWatch
from .scenarios._interrupts import InterruptGuard
from .scenarios._resources import RunResources
from .scenarios._suite import SUITE_DIR

GROUP = "rag-conformance"

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
    # Every option is a field of RunOptions: its help, flag and type are written there, once.
    add_pytest_options(
        parser.getgroup(GROUP, "rag-retrieval-quality-score conformance kit"), engines=ENGINE_HELP
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
    options = RunOptions.from_pytest(config)  # the one value every part of the run reads (RunOptions.of)
    for name, doc in (*TAG_MARKERS.values(), *FLAG_MARKERS.values()):
        config.addinivalue_line("markers", f"{name}: {doc}")
    install_step_lookup_cache()
    for module in PLUGIN_MODULES:
        if not config.pluginmanager.has_plugin(module):
            config.pluginmanager.register(importlib.import_module(module), module)
    # The OutcomeCollector writes report.json and junit.xml (one suite per requirement) into the report dir.
    problem = output_dir_problem(options.report, REPORT_FILES) if options.report else None
    if problem:
        raise pytest.UsageError(f"{problem}: pass another --rqs-report (nothing was run)")
    outcomes = OutcomeCollector(config, options)
    config.pluginmanager.register(outcomes, "rqs-outcomes")
    if options.judging:
        # A judging run: a signal ends it INTERRUPTED. Other pytest sessions keep pytest's own handling.
        guard = InterruptGuard(outcomes)
        config.pluginmanager.register(guard, "rqs-interrupts")
        guard.install()
    _keep_hypothesis_out_of_cwd(config, options)
    resources = RunResources(config, options, on_warning=outcomes.warn)
    config.pluginmanager.register(EngineWatch(resources, outcomes), "rqs-engine-watch")


_HYPOTHESIS_HOME = pytest.StashKey[bool]()


def _keep_hypothesis_out_of_cwd(config: pytest.Config, options: RunOptions) -> None:
    """Hypothesis keeps a storage directory (``.hypothesis/``, its constants cache even with the
    property scenarios' ``database=None``) in the working directory; a judging run puts it under the
    report directory, or the user's cache without one. ``HYPOTHESIS_STORAGE_DIRECTORY`` wins, and a
    pytest run that does not judge (no report, no adapter) is left as it is."""
    if os.environ.get("HYPOTHESIS_STORAGE_DIRECTORY"):
        return
    if options.report:
        home = Path(options.report) / ".hypothesis"
    elif options.judging:
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


def pytest_itemcollected(item: pytest.Item) -> None:
    # `-k dense-quality-from-l2` selects by the report's own scenario id, as `-k dense_quality_from_l2`
    # does by the test's name: the id becomes one of the item's keywords (matched as -k matches names).
    scenario_id = item.get_closest_marker("rqs_id")
    if scenario_id is not None and scenario_id.args:
        item.extra_keyword_matches.add(str(scenario_id.args[0]))


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    # An implementation's verdict must not depend on engine quirks, so engine checks run on request.
    checks = RunOptions.of(config).checks
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


# trylast: after pytest's own teardown of the session fixtures (the oracle drops its collection through
# the engine, which must still be open); an interrupted run reaches it with those fixtures still up.
@pytest.hookimpl(trylast=True)
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

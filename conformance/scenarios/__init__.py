"""The scenarios in pytest: step definitions, fixtures, strategies, the run's resources and its suite.

- ``steps/``: the Gherkin steps, one module per domain (labels, quality, post-process, gates, search,
  lookup, evidence, engine, properties, the knowledge base).
- ``_fixtures``: every ``rqs_*`` fixture in one place, and the two gates every scenario passes.
- ``_profiles``: how many examples a property draws, by profile.
- ``_strategies``: the Hypothesis strategies of the property scenarios; ``_explicit``: the inputs every
  run asks before any random draw; ``_input_model``: the input classes a run covers, as data (the page
  ``features/spec/input-model.md``), with a probe per class (``_input_probes``: those of the one-field
  pairs, falsy settings, gate crossings and mixed batches); ``_hostile_examples``: every hostile class of
  every field of the pure requests, asked every run; ``_hostile_matrix``: the field x class matrix.
- ``_resources``: the run's implementation and engine, made once; NOT JUDGED before the first scenario
  when either cannot be had.
- ``_engine_watch``: an engine lost mid-run makes the rest NOT JUDGED, never the implementation's fault.
- ``_interrupts``: SIGINT and SIGTERM end a run INTERRUPTED (exit 130 / 143), never as a failure.
- ``_bdd_step_cache``: a speed patch of pytest-bdd: its step lookup cached, for the kit's own suite only.
- ``_suite/``: the kit's pytest suite (one module binding every feature file) and its ``pytest.ini``.

Registered by :mod:`conformance.plugin`; the plugin itself only names what to register (and takes the
engine names its ``--rqs-milvus`` help lists from here: the engines layer's ``ENGINE_HELP``).
"""

from ..engines._address import ENGINE_HELP
from .steps import STEP_MODULES

__all__ = ["ENGINE_HELP", "PLUGIN_MODULES"]

PLUGIN_MODULES: tuple[str, ...] = (*STEP_MODULES, "conformance.scenarios._fixtures")
"""Every module the plugin registers: the step definitions, then the fixtures."""

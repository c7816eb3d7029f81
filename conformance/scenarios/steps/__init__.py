"""Step definitions, one module per domain; the plugin registers every module in :data:`STEP_MODULES`.

- ``quality``, ``postprocess``, ``gates``, ``labels``: the pure capabilities' scenarios;
- ``search``, ``lookup``: the scenarios on Milvus, through the judge;
- ``evidence``: evidence blocks' labels and order at the lookup and post-process levels (R2, R7);
- ``engine``, ``engine_then`` (with ``_engine_kit``): the engine-behaviour scenarios (``--checks engine``),
  and ``engine_questions``: the behaviours users trip on, each recorded as an engine fact;
- ``properties``, ``knowledge_base`` (with ``_property_run``, and ``_explicit_loop`` for the fixed
  examples every run asks first): the property scenarios, over generated inputs and over the generated
  knowledge base;
- ``_tables``: reading the feature files' data tables.
"""

STEP_MODULES: tuple[str, ...] = (
    "conformance.scenarios.steps.quality",
    "conformance.scenarios.steps.postprocess",
    "conformance.scenarios.steps.gates",
    "conformance.scenarios.steps.labels",
    "conformance.scenarios.steps.search",
    "conformance.scenarios.steps.lookup",
    "conformance.scenarios.steps.evidence",
    "conformance.scenarios.steps.engine",
    "conformance.scenarios.steps.engine_then",
    "conformance.scenarios.steps.engine_questions",
    "conformance.scenarios.steps.properties",
    "conformance.scenarios.steps.knowledge_base",
)

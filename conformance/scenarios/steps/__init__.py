"""Step definitions, one module per domain. The plugin registers every module listed here."""

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
    "conformance.scenarios.steps.properties",
    "conformance.scenarios.steps.knowledge_base",
)

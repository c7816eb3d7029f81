"""Step definitions, one module per domain. The plugin registers every module listed here."""

STEP_MODULES: tuple[str, ...] = (
    "conformance.steps._judging",
    "conformance.steps.quality",
    "conformance.steps.postprocess",
    "conformance.steps.gates",
    "conformance.steps._milvus_fixtures",
    "conformance.steps.labels",
    "conformance.steps.search",
    "conformance.steps.lookup",
    "conformance.steps.evidence",
    "conformance.steps.engine",
    "conformance.steps.engine_then",
    "conformance.steps.properties",
    "conformance.steps.knowledge_base",
)

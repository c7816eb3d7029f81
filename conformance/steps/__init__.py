"""Step definitions, one module per domain. The plugin registers every module listed here."""

STEP_MODULES: tuple[str, ...] = (
    "conformance.steps.quality",
    "conformance.steps.postprocess",
    "conformance.steps.gates",
)

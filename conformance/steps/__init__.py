"""Step definitions, one module per domain. The plugin registers every module listed here."""

STEP_MODULES: tuple[str, ...] = ()

"""The test module that binds every feature file; run by ``rag-conformance run``."""

"""How many examples a property scenario draws, by ``--rqs-profile``: one home for the counts."""

from __future__ import annotations

__all__ = ["KNOWLEDGE_BASE_EXAMPLES", "PROPERTY_PROFILES"]

# "selftest" runs every miniature of the mutation matrix: 10 examples without shrinking. The matrix needs
# verdicts only, and every reply is also checked whole by the model, so the deterministic scenarios
# catch every miniature; properties add random inputs on top.
PROPERTY_PROFILES = {"ci": 100, "thorough": 1000, "selftest": 10}
"""Examples per property over pure capabilities (post-process, the normalizer)."""
KNOWLEDGE_BASE_EXAMPLES = {"ci": 8, "thorough": 100, "selftest": 4}
"""Examples per property over the knowledge base, after its explicit requests: each is a search or a
lookup on Milvus, not a call to pure code."""

# The profiles' names are the run options' (conformance.options.PROFILES); a test holds them equal.

"""Checked by mypy in tests/conformance/test_protocol_typing.py: drift from the Protocol is a type error."""

from conformance import Implementation
from conformance.adapters.reference import ReferenceAdapter

reference_adapter: Implementation = ReferenceAdapter()

"""Checked by mypy in tests/unit/conformance/boundary/test_protocol_typing.py: drift from the Protocol is
a type error."""

from conformance import Implementation, ImplementationBase
from conformance.adapters.reference import ReferenceAdapter

reference_adapter: Implementation = ReferenceAdapter()


class LabelsOnly(ImplementationBase):
    """The adapter base class: a subclass writing one method is an Implementation too."""

    name = "labels-only"
    version = "1"
    capabilities = ("labels",)

    def canonicalize_label(self, label: str) -> str:
        return label


labels_only: Implementation = LabelsOnly()

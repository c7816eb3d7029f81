"""Declining a question: the NOT APPLICABLE outcome, for in-process and out-of-process implementations."""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest

if TYPE_CHECKING:
    from ._protocol import ImplementationInfo

__all__ = ["NOT_APPLICABLE_PREFIX", "NotApplicable", "require_mode"]

NOT_APPLICABLE_PREFIX = "NOT APPLICABLE: "
"""How a declined question's skip reason starts: the report reads it as NOT APPLICABLE."""


class NotApplicable(pytest.skip.Exception):
    """The implementation declined one question (``{"skipped": reason}``): NOT APPLICABLE, not failed.

    A pytest skip, so the recorder maps it like any ``NOT APPLICABLE: `` skip. pytest reports a skip's
    reason as ``<module>.<class>: <message>`` unless the class looks like its own ``Skipped`` (which
    pytest marks as a builtin); borrow that look so the reason reads the same.
    """

    __module__ = "builtins"
    __qualname__ = "Skipped"

    def __init__(self, reason: str) -> None:
        self.reason = reason
        super().__init__(f"{NOT_APPLICABLE_PREFIX}{reason}")


def require_mode(info: ImplementationInfo, capability: str, mode: str) -> None:
    """Raise :class:`NotApplicable` unless ``capability`` was declared for ``mode``.

    ``info`` is the implementation's :class:`~conformance.ImplementationInfo`. A scenario tagged
    ``@needs:search`` runs when any search mode is declared; each question it asks for one mode is
    NOT APPLICABLE when that mode is not (``search:dense`` declares dense only).
    """
    if not info.supports(capability, mode):
        raise NotApplicable(
            f"implementation {info.name!r} does not declare capability {capability!r} for mode {mode!r}"
        )

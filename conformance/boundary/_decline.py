"""Declining a question: the NOT APPLICABLE outcome, for in-process and out-of-process implementations.

A declined question is a pytest skip, so :class:`NotApplicable` subclasses pytest's; it is built on first
use, so that an adapter author's ``from conformance import ImplementationBase`` does not load pytest.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from _pytest.outcomes import Skipped  # pytest.skip.Exception, as a type checker can name it

    from ._protocol import ImplementationInfo

__all__ = ["NOT_APPLICABLE_PREFIX", "NotApplicable", "require_mode"]

NOT_APPLICABLE_PREFIX = "NOT APPLICABLE: "
"""How a declined question's skip reason starts: the report reads it as NOT APPLICABLE."""


class _Declined:
    """The implementation declined one question (``{"skipped": reason}``): NOT APPLICABLE, not failed.

    A pytest skip, so the recorder maps it like any ``NOT APPLICABLE: `` skip (and Hypothesis stops at it
    rather than shrinking it as a failure). pytest reports a skip's reason as ``<module>.<class>:
    <message>`` unless the class looks like its own ``Skipped`` (which pytest marks as a builtin); borrow
    that look so the reason reads the same.
    """

    __module__ = "builtins"
    __qualname__ = "Skipped"

    def __init__(self, reason: str) -> None:
        self.reason = reason
        super().__init__(f"{NOT_APPLICABLE_PREFIX}{reason}")  # type: ignore[call-arg]


if TYPE_CHECKING:

    class NotApplicable(_Declined, Skipped):
        reason: str

        def __init__(self, reason: str) -> None: ...


def not_applicable() -> type[NotApplicable]:
    """The :class:`NotApplicable` class, built on the first call (it imports pytest)."""
    built = globals().get("NotApplicable")
    if built is None:
        import pytest  # the first decline, or the kit itself (which runs in pytest), loads it

        built = type("NotApplicable", (_Declined, pytest.skip.Exception), {"__doc__": _Declined.__doc__})
        built.__module__, built.__qualname__ = "builtins", "Skipped"
        globals()["NotApplicable"] = built
    return built  # type: ignore[no-any-return]


def __getattr__(name: str) -> Any:
    if name == "NotApplicable":
        return not_applicable()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def require_mode(info: ImplementationInfo, capability: str, mode: str) -> None:
    """Raise :class:`NotApplicable` unless ``capability`` was declared for ``mode``.

    ``info`` is the implementation's :class:`~conformance.ImplementationInfo`. A scenario tagged
    ``@needs:search`` runs when any search mode is declared; each question it asks for one mode is
    NOT APPLICABLE when that mode is not (``search:dense`` declares dense only).
    """
    if not info.supports(capability, mode):
        raise not_applicable()(
            f"implementation {info.name!r} does not declare capability {capability!r} for mode {mode!r}"
        )

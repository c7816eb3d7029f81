"""What one pytest phase of a scenario says about it: its status and message for the report."""

from __future__ import annotations

from collections.abc import Generator
from typing import Any

import pytest

from ..boundary._errors import ConformanceError
from ._report import NOT_APPLICABLE_PREFIX, NOT_JUDGED_PREFIX
from ._shorten import shorten_middle

__all__ = ["classify", "error_text", "with_step"]

_MESSAGE_LIMIT = 2000
_STRICT_XPASS = "[XPASS(strict)] "


def classify(report: pytest.TestReport, call: pytest.CallInfo[None]) -> tuple[Any, str | None]:
    """(status, message) for one phase; (None, None) when the phase decides nothing."""
    if hasattr(report, "wasxfail"):
        if report.skipped:
            return "xfailed", str(report.wasxfail)
        return "failed", f"expected to fail but passed (stale expectation: remove it): {report.wasxfail}"
    if report.failed and report.when == "call" and str(report.longrepr).startswith(_STRICT_XPASS):
        # pytest reports a strict XPASS as a plain failure, without wasxfail: only the text says so.
        reason = str(report.longrepr).removeprefix(_STRICT_XPASS)
        return "failed", f"expected to fail but passed (stale expectation: remove it): {reason}"
    if report.skipped:
        reason = _skip_reason(report)
        if reason.startswith(NOT_APPLICABLE_PREFIX):
            return "not_applicable", reason[len(NOT_APPLICABLE_PREFIX) :]
        if reason.startswith(NOT_JUDGED_PREFIX):
            return "not_judged", reason[len(NOT_JUDGED_PREFIX) :]
        return "skipped", reason
    if report.failed:
        exc = call.excinfo.value if call.excinfo else None
        if report.when == "call" and isinstance(exc, AssertionError):
            return "failed", _short(str(exc))
        text = error_text(exc) if exc is not None else report.longreprtext
        if report.when != "call" and not isinstance(exc, ConformanceError):
            text = f"in {report.when}: {text}"
        return "errored", _short(text)
    if report.when == "call":
        return "passed", None
    return None, None


def with_step(message: str, step: str, rules: tuple[str, ...]) -> str:
    """A failure's message with the Gherkin step it happened in (``step 'Then ...'``).

    A rule of the spec's model that broke (``rules``) is named in the message with what it expected and
    what came: that leads, and the step follows on a line of its own, since a step checking one thing
    ("within [0, 1]") may meet a reply that breaks another (the dense formula). A step's own assertion
    is the step's rule: the step leads."""
    return f"{message}\n(in {step})" if rules else f"{step}: {message}"


def _skip_reason(report: pytest.TestReport) -> str:
    longrepr = report.longrepr
    if isinstance(longrepr, tuple) and len(longrepr) == 3:
        return str(longrepr[2]).removeprefix("Skipped: ")
    return str(longrepr)


def error_text(exc: BaseException) -> str:
    """``Type: message``; for a group (Hypothesis's distinct failures, several finalizers), each error
    inside it, so the report says what went wrong rather than how many things did."""
    if not isinstance(exc, BaseExceptionGroup):
        return f"{type(exc).__name__}: {exc}"
    leaves = list(_group_leaves(exc))
    return f"{len(leaves)} distinct errors: " + " | ".join(
        f"({i}) {type(leaf).__name__}: {leaf}" for i, leaf in enumerate(leaves, 1)
    )


def _group_leaves(group: BaseExceptionGroup[Any]) -> Generator[BaseException, None, None]:
    for inner in group.exceptions:
        if isinstance(inner, BaseExceptionGroup):
            yield from _group_leaves(inner)
        else:
            yield inner


def _short(text: str) -> str:
    """The message within its limit, its middle left out: its end holds what was expected and got."""
    return shorten_middle(text.strip(), _MESSAGE_LIMIT)

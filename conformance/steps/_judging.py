"""The ``rqs_judge`` fixture: the implementation behind the one call site that checks every reply.

Steps ask through the judge, never the implementation directly (see :mod:`conformance._judge`). Search
and lookup reach the oracle and the recording proxy only when asked, so pure scenarios start no engine.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from .._advice import Advisor
from .._judge import NOTES, Judge
from .._protocol import Implementation, ImplementationInfo
from ..reporting._outcomes import OutcomeCollector

__all__ = ["rqs_advisor", "rqs_judge", "rqs_judge_memory"]


@pytest.fixture(scope="session")
def rqs_judge_memory() -> dict[str, Any]:
    """What the judges of a run learn once about the implementation (its hybrid mode's collections)."""
    return {}


@pytest.fixture(scope="session")
def rqs_advisor(pytestconfig: pytest.Config) -> Iterator[Advisor]:
    """Sees every question and reply of the run; at its end, its advice goes into the report."""
    advisor = Advisor()
    yield advisor
    collector = pytestconfig.stash.get(OutcomeCollector.key, None)
    if collector is not None:
        for text in advisor.advice():
            collector.advise(text)


@pytest.fixture
def rqs_judge(
    request: pytest.FixtureRequest,
    rqs_implementation: Implementation,
    rqs_info: ImplementationInfo,
    rqs_advisor: Advisor,
    rqs_judge_memory: dict[str, Any],
) -> Judge:
    """Asks the implementation; raises a FAILED-scenario error naming the requirement a reply breaks."""
    notes = request.node.stash.setdefault(NOTES, [])

    def oracle() -> Any:
        request.getfixturevalue("rqs_corpus")  # the implementation has the corpus before it is asked
        return request.getfixturevalue("rqs_oracle")

    def recorder() -> Any:
        return request.getfixturevalue("rqs_recorder")

    return Judge(
        rqs_implementation,
        rqs_info,
        oracle=oracle,
        recorder=recorder,
        notes=notes,
        observe=rqs_advisor.observe,
        memory=rqs_judge_memory,
    )

"""The statistics stack as an extra: what the evaluation and the upgrade check need beyond the kit.

A bare ``pip install rag-quality-conformance`` carries the kit (``rag-conformance run`` and the rest)
without SciPy, ir-measures, pytrec-eval-terrier, tqdm and wordllama; ``rag-reference evaluate`` and
``rag-conformance upgrade`` need them, and :func:`require_statistics` names the one command that
installs them (``.[test]`` installs them too). Nothing here imports any of them.
"""

from __future__ import annotations

import importlib.util

from ._errors import EvaluationError

__all__ = [
    "EVALUATION_EXTRA",
    "STATISTICS_MODULES",
    "StatisticsUnavailableError",
    "missing_statistics",
    "require_statistics",
]

EVALUATION_EXTRA = "pip install 'rag-quality-conformance[evaluation]'"
"""The command that installs the statistics stack."""

STATISTICS_MODULES: dict[str, str] = {
    "scipy": "scipy",
    "ir_measures": "ir-measures",
    "pytrec_eval": "pytrec-eval-terrier",
    "tqdm": "tqdm",
    "wordllama": "wordllama",
}
"""Import name -> the distribution that provides it, for every module of the stack."""


class StatisticsUnavailableError(EvaluationError):
    """A module of the statistics stack is not installed; the message names the command to install it."""


def missing_statistics() -> list[str]:
    """The distributions of the stack that are not importable here, in the table's order."""
    return [dist for module, dist in STATISTICS_MODULES.items() if importlib.util.find_spec(module) is None]


def require_statistics(what: str) -> None:
    """Raise :class:`StatisticsUnavailableError` naming the extra if ``what`` (a command) cannot run."""
    missing = missing_statistics()
    if missing:
        raise StatisticsUnavailableError(
            f"{what} needs the evaluation's statistics stack, and {', '.join(missing)} "
            f"{'is' if len(missing) == 1 else 'are'} not installed: run {EVALUATION_EXTRA} "
            "(the test extra, '.[test]', installs it too)"
        )

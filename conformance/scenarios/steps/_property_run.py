"""The machinery of the property scenarios: the seeded Hypothesis run, asking, and the kit's small oracles.

Kept apart from the step module so that :mod:`conformance.scenarios.steps.properties` reads as the
scenarios do.
"""

from __future__ import annotations

import os
from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, Phase, given, seed, settings
from hypothesis import strategies as st

from ...boundary._errors import AdapterCallError
from ...boundary._protocol import (
    Block,
    Hints,
    PostProcessConfig,
    PostProcessReply,
    PostProcessRequest,
    QualityRequest,
    WireCandidate,
)
from ...boundary._signals import interrupt_behind
from ...boundary._tally import count_example
from ...judging._attribution import ALIASES, reattribute
from ...judging._judge import Judge
from ...judging._spec_model import SpecViolationError, top_readings
from ...judging._spec_model import canonical as canonical_label
from .._profiles import KNOWLEDGE_BASE_EXAMPLES
from ._explicit_loop import run_explicit

__all__ = [
    "PropertyRun",
    "close",
    "gates_comparable",
    "post",
    "quality",
    "same_qualities",
    "same_ranks",
    "shown",
]

_PHASES = tuple(Phase)
_UNSHRUNK = (Phase.reuse, Phase.generate)  # first failure as found, no shrink or explain
_EXACT = 1e-12  # same inputs that must not matter: the answers must agree up to float noise only
_INSTALLED_UNDER = str(Path(__file__).resolve().parents[3]) + os.sep  # the dir holding the package


@dataclass(frozen=True)
class PropertyRun:
    """The seed and example count every property of this run uses."""

    seed: int
    profile: str
    max_examples: int
    shrink: bool = True

    def on_knowledge_base(self) -> PropertyRun:
        """The same run with the few examples a property over the knowledge base draws: each one is a
        search or a lookup on Milvus, not a call to pure code."""
        return replace(self, max_examples=KNOWLEDGE_BASE_EXAMPLES.get(self.profile, 12))

    def check(
        self,
        strategies: dict[str, st.SearchStrategy[Any]],
        body: Callable[..., None],
        *,
        examples: Sequence[dict[str, Any]] = (),
    ) -> None:
        """Run ``body`` on the given ``examples`` (every run), then over the strategies; on failure, FAIL
        with the falsifying examples and the seed."""

        def one(**values: Any) -> None:
            count_example()  # every example run, shrinking's included: the report's true count
            try:
                body(**values)
            except SpecViolationError as exc:
                raise _attributed(exc, body, values) from None

        @settings(
            max_examples=self.max_examples,
            derandomize=False,  # the seed decides; a user's derandomizing profile must not override it
            database=None,  # nothing written into the user's working directory
            deadline=None,  # adapters may be out of process or slow; speed is not conformance
            suppress_health_check=list(HealthCheck),
            print_blob=False,
            phases=_PHASES if self.shrink else _UNSHRUNK,
        )
        @seed(self.seed)
        @given(**strategies)
        def prop(**values: Any) -> None:  # the name the falsifying examples show, drawn or given
            one(**values)

        try:
            run_explicit(one, examples, self.seed)  # a failing one ends the property, as @example did
            prop()
        except AssertionError as exc:
            if (stop := interrupt_behind(exc)) is not None:
                raise stop from None  # an interrupt a library turned into an assertion of its own
            raise _failed(self._explain([exc]), [exc]) from None
        except BaseExceptionGroup as group:
            if (stop := interrupt_behind(group)) is not None:
                raise stop from None
            # Several distinct falsifying examples come as a group. Made of assertion failures only, it
            # is still a FAILED property (not a crash): say every one of them.
            failures, rest = group.split(AssertionError)
            if failures is None or rest is not None:
                raise
            leaves = list(_leaves(failures))
            raise _failed(self._explain(leaves), leaves) from None

    def _explain(self, failures: list[BaseException]) -> str:
        parts = [f"{exc}\n" + "\n".join(getattr(exc, "__notes__", ())) for exc in failures]
        if len(parts) > 1:
            parts = [f"falsifying example {i} of {len(parts)}: {p}" for i, p in enumerate(parts, 1)]
        # Hypothesis names the lines only failing examples ran, by absolute path: show them relative
        # to where the kit is installed (conformance/scenarios/steps/..., or a checkout's tests/...).
        text = "\n".join(parts).replace(_INSTALLED_UNDER, "")
        if self.profile == "selftest":
            return text + f"\n(replay: rag-conformance selftest --seed {self.seed})"
        # The same hint must work wherever the message is read: the CLI and pytest spell it differently.
        return text + (
            f"\n(replay: rag-conformance run --seed {self.seed} --profile {self.profile}; "
            f"in pytest: --rqs-seed {self.seed} --rqs-profile {self.profile})"
        )


def _attributed(
    exc: SpecViolationError, body: Callable[..., None], values: dict[str, Any]
) -> SpecViolationError:
    """A property broken only through legacy alias labels breaks R1 (canonicalization), whichever rule saw it.

    The property runs again with every alias replaced by its canonical label; if it then holds, the
    findings are counted under ``alias-quality`` (see :mod:`conformance.judging._attribution`).
    """
    canonical = {name: _canonical(value) for name, value in values.items()}
    if canonical == values:
        return exc
    try:
        body(**canonical)
    except AssertionError:
        return exc
    return SpecViolationError("property", reattribute(list(exc.violations), ALIASES))


def _canonical(value: Any) -> Any:
    if isinstance(value, WireCandidate | QualityRequest):
        label = canonical_label(value.score_label) or value.score_label
        return value if label == value.score_label else value.model_copy(update={"score_label": label})
    if isinstance(value, tuple):
        return tuple(_canonical(v) for v in value)
    if isinstance(value, list):
        return [_canonical(v) for v in value]
    return value


def _failed(message: str, failures: Sequence[BaseException]) -> AssertionError:
    """The property's failure, keeping which requirements the falsifying examples broke (for the report)."""
    error = AssertionError(message)
    error.violations = tuple(v for f in failures for v in getattr(f, "violations", ()))  # type: ignore[attr-defined]
    return error


# -- asking, with a crash on a valid generated input read as non-conformance -------------------------


def quality(judge: Judge, request: QualityRequest) -> float:
    try:
        return judge.quality_score(request)
    except AdapterCallError as exc:
        raise AssertionError(f"the normalizer {exc.what_happened()}") from None


def post(
    judge: Judge,
    candidates: Sequence[WireCandidate],
    config: PostProcessConfig,
    hints: Hints | None = None,
) -> PostProcessReply:
    request = PostProcessRequest(candidates=tuple(candidates), hints=hints or Hints(), config=config)
    try:
        return judge.post_process(request)
    except AdapterCallError as exc:
        raise AssertionError(f"post-process {exc.what_happened()}") from None


def shown(blocks: Sequence[Block]) -> str:
    return ", ".join(f"{b.evidence_key} (rank {b.original_rank}, q={b.quality_score:.6g})" for b in blocks)


def same_ranks(one: PostProcessReply, two: PostProcessReply) -> bool:
    """The same originalRanks accepted in the same order (which tied chunk may differ: readings 10)."""
    return [b.original_rank for b in one.blocks] == [b.original_rank for b in two.blocks]


def same_qualities(one: PostProcessReply, two: PostProcessReply, batch: Sequence[WireCandidate]) -> bool:
    """The same qualityScores rank by rank, where the batch leaves no choice: a tie group that a cap or
    return-n cut may keep other chunks of that rank, with other qualities (readings 10)."""
    candidates = Counter(c.original_rank for c in batch)
    mine, theirs = _by_rank(one), _by_rank(two)
    for rank in mine.keys() | theirs.keys():
        a, b = mine.get(rank, []), theirs.get(rank, [])
        if len(a) != len(b):
            return False
        if candidates[rank] == len(a) and not close(a, b):
            return False
    return True


def _by_rank(reply: PostProcessReply) -> dict[int, list[float]]:
    groups: dict[int, list[float]] = {}
    for b in reply.blocks:
        groups.setdefault(b.original_rank, []).append(b.quality_score)
    return {rank: sorted(qualities) for rank, qualities in groups.items()}


def gates_comparable(one: PostProcessReply, two: PostProcessReply) -> bool:
    """Whether both replies must decide the gates alike: the same accepted qualities and the same tops."""
    qualities = [b.quality_score for b in one.blocks], [b.quality_score for b in two.blocks]
    tops = sorted(top_readings(qualities[0])), sorted(top_readings(qualities[1]))
    return close(sorted(qualities[0]), sorted(qualities[1])) and close(*tops)


def close(a: Sequence[float], b: Sequence[float], tolerance: float = _EXACT) -> bool:
    return len(a) == len(b) and all(abs(x - y) <= tolerance for x, y in zip(a, b, strict=True))


def _leaves(group: BaseExceptionGroup[Any]) -> Iterator[BaseException]:
    for exc in group.exceptions:
        if isinstance(exc, BaseExceptionGroup):
            yield from _leaves(exc)
        else:
            yield exc

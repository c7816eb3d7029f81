"""The machinery of the property scenarios: the seeded Hypothesis run, asking, and the kit's small oracles.

Kept apart from the step module so that :mod:`conformance.steps.properties` reads as the scenarios do.
"""

from __future__ import annotations

import os
from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, Phase, given, seed, settings
from hypothesis import strategies as st

from .._calls import ask
from .._errors import AdapterCallError
from .._protocol import (
    Block,
    Hints,
    Implementation,
    PostProcessConfig,
    PostProcessReply,
    PostProcessRequest,
    QualityRequest,
    WireCandidate,
)

__all__ = ["PropertyRun", "close", "kept_ranks", "post", "quality", "shown", "top", "without_reasons"]

_PHASES = tuple(Phase)
_UNSHRUNK = (Phase.explicit, Phase.reuse, Phase.generate)  # first failure as found, no shrink or explain
_EXACT = 1e-12  # same inputs that must not matter: the answers must agree up to float noise only
_INSTALLED_UNDER = str(Path(__file__).resolve().parents[2]) + os.sep  # the dir holding the package


@dataclass(frozen=True)
class PropertyRun:
    """The seed and example count every property of this run uses."""

    seed: int
    profile: str
    max_examples: int
    shrink: bool = True

    def check(self, strategies: dict[str, st.SearchStrategy[Any]], body: Callable[..., None]) -> None:
        """Run ``body`` over the strategies; on failure, FAIL with the falsifying example and the seed."""

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
        def prop(**values: Any) -> None:
            body(**values)

        try:
            prop()
        except AssertionError as exc:
            raise AssertionError(self._explain([exc])) from None
        except BaseExceptionGroup as group:
            # Hypothesis reports several distinct falsifying examples as a group. Made of assertion
            # failures only, it is still a FAILED property (not a crash): say every one of them.
            failures, rest = group.split(AssertionError)
            if failures is None or rest is not None:
                raise
            raise AssertionError(self._explain(list(_leaves(failures)))) from None

    def _explain(self, failures: list[BaseException]) -> str:
        parts = [f"{exc}\n" + "\n".join(getattr(exc, "__notes__", ())) for exc in failures]
        if len(parts) > 1:
            parts = [f"falsifying example {i} of {len(parts)}: {p}" for i, p in enumerate(parts, 1)]
        # Hypothesis names the lines only failing examples ran, by absolute path: show them relative
        # to where the kit is installed (conformance/steps/..., or a checkout's tests/...).
        text = "\n".join(parts).replace(_INSTALLED_UNDER, "")
        if self.profile == "selftest":
            return text + f"\n(replay: rag-conformance selftest --seed {self.seed})"
        # The same hint must work wherever the message is read: the CLI and pytest spell it differently.
        return text + (
            f"\n(replay: rag-conformance run --seed {self.seed} --profile {self.profile}; "
            f"in pytest: --rqs-seed {self.seed} --rqs-profile {self.profile})"
        )


# -- asking, with a crash on a valid generated input read as non-conformance -------------------------


def quality(implementation: Implementation, request: QualityRequest) -> float:
    try:
        return float(ask(implementation, "quality_score", request, expect=float))
    except AdapterCallError as exc:
        raise AssertionError(f"the normalizer raised {type(exc.cause).__name__}: {exc.cause}") from None


def post(
    implementation: Implementation,
    candidates: Sequence[WireCandidate],
    config: PostProcessConfig,
    hints: Hints | None = None,
) -> PostProcessReply:
    request = PostProcessRequest(candidates=tuple(candidates), hints=hints or Hints(), config=config)
    try:
        reply: PostProcessReply = ask(implementation, "post_process", request, expect=PostProcessReply)
        return reply
    except AdapterCallError as exc:
        raise AssertionError(f"post-process raised {type(exc.cause).__name__}: {exc.cause}") from None


def shown(blocks: Sequence[Block]) -> str:
    return ", ".join(f"{b.evidence_key} (rank {b.original_rank}, q={b.quality_score:.6g})" for b in blocks)


def without_reasons(reply: PostProcessReply) -> tuple[Any, ...]:
    blocks = tuple((b.evidence_key, b.original_rank, b.score_label) for b in reply.blocks)
    qualities = [b.quality_score for b in reply.blocks]
    return blocks, qualities, reply.relevance_level, reply.is_low_quality, reply.top_quality_score


def close(a: Sequence[float], b: Sequence[float]) -> bool:
    return len(a) == len(b) and all(abs(x - y) <= _EXACT for x, y in zip(a, b, strict=True))


def top(reply: PostProcessReply) -> float | None:
    # On rank-ordered batches the first block is also the best: both readings of "top" agree.
    return max((b.quality_score for b in reply.blocks), default=None)


def kept_ranks(batch: Sequence[WireCandidate], config: PostProcessConfig) -> list[int]:
    """The kit's own oracle: dedup, per-document cap and return-n walked in originalRank order.

    Which of several tied candidates is kept may differ between conforming orders, their ranks may not.
    """
    seen: set[tuple[str, int]] = set()
    per_doc: Counter[str] = Counter()
    kept: list[int] = []
    for c in sorted(batch, key=lambda c: c.original_rank):
        key = (c.doc_id, c.chunk_index)
        if key in seen or per_doc[c.doc_id] >= config.max_chunks_per_document or len(kept) >= config.return_n:
            seen.add(key)
            continue
        seen.add(key)
        per_doc[c.doc_id] += 1
        kept.append(c.original_rank)
    return kept


def _leaves(group: BaseExceptionGroup[Any]) -> Iterator[BaseException]:
    for exc in group.exceptions:
        if isinstance(exc, BaseExceptionGroup):
            yield from _leaves(exc)
        else:
            yield exc

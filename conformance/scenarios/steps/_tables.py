"""Gherkin data tables -> wire values, and the small readings the post-process steps share.

Tables use the wire's camelCase names as headers (``docId``, ``originalRank``, ``sourceType``...), so
a feature file reads like the spec and a header typo fails loudly instead of being ignored.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from pydantic import ValidationError

from ...boundary._protocol import Block, Hints, PostProcessConfig, PostProcessReply, WireCandidate

__all__ = [
    "SETTING_KEYS",
    "candidates_from_table",
    "describe_blocks",
    "hint_matches",
    "hints_from_table",
    "optional_float",
    "ranks_from_text",
    "settings_from_table",
    "yes_no",
]

_NULL = {"", "null", "none"}
_CANDIDATE_FIELDS = {info.alias or name for name, info in WireCandidate.model_fields.items()}
_HINT_LISTS = {"entities", "keywords"}


def optional_float(text: str) -> float | None:
    """A table or step number where ``null`` means "no value" (the spec's null score)."""
    return None if text.strip().lower() in _NULL else float(text)


def yes_no(text: str) -> bool:
    """``yes``/``no`` in feature files, so that a non-programmer can read the Examples."""
    answer = text.strip().lower()
    if answer not in {"yes", "no"}:
        raise ValueError(f"expected 'yes' or 'no' in the feature file, got {text!r}")
    return answer == "yes"


def ranks_from_text(text: str) -> tuple[int, ...]:
    """``"1, 3"`` -> ``(1, 3)``."""
    return tuple(int(part) for part in text.split(",") if part.strip())


def candidates_from_table(
    table: Sequence[Sequence[str]], *, label: str | None = None
) -> tuple[WireCandidate, ...]:
    """Rows of a candidate table, in table order (the order handed to post-process).

    ``label`` fills ``scoreLabel`` when the table has no such column. Empty or ``null`` cells are absent
    values. Values are validated by the wire model itself, so a bad cell names its field.
    """
    header, *rows = [[cell.strip() for cell in row] for row in table]
    unknown = set(header) - _CANDIDATE_FIELDS
    if unknown:
        raise ValueError(
            f"candidate table has unknown columns {sorted(unknown)}; use {sorted(_CANDIDATE_FIELDS)}"
        )
    candidates = []
    for number, row in enumerate(rows, start=1):
        values: dict[str, object] = {k: v for k, v in zip(header, row, strict=True) if v.lower() not in _NULL}
        if label is not None:
            values.setdefault("scoreLabel", label)
        try:
            candidates.append(WireCandidate.model_validate(values))
        except ValidationError as exc:
            raise ValueError(f"candidate table row {number} is not a valid candidate: {exc}") from None
    return tuple(candidates)


# The spec's and the reference's dotted setting keys -> PostProcessConfig fields (the wire's names).
SETTING_KEYS = {
    "rag.max-l2-distance": "max_l2_distance",
    "rag.reference-threshold": "reference_threshold",
    "rag.highly-relevant-threshold": "highly_relevant_threshold",
    "rag.return-n": "return_n",
    "rag.max-chunks-per-document": "max_chunks_per_document",
}
_LOOKUP_KEYS = ("rag.retrieve-k", "retrieval.search.rrf-k")


def settings_from_table(
    table: Sequence[Sequence[str]], base: PostProcessConfig
) -> tuple[PostProcessConfig, dict[str, str]]:
    """A two-column ``| key | value |`` table of dotted setting keys: the config, and the lookup-only keys."""
    update: dict[str, object] = {}
    extra: dict[str, str] = {}
    for key, value in ((row[0].strip(), row[1].strip()) for row in table):
        if key in SETTING_KEYS:
            update[SETTING_KEYS[key]] = value
        elif key in _LOOKUP_KEYS:
            extra[key] = value
        else:
            raise ValueError(f"unknown setting {key!r}; use {sorted([*SETTING_KEYS, *_LOOKUP_KEYS])}")
    return PostProcessConfig.model_validate({**base.model_dump(by_alias=False), **update}), extra


def hints_from_table(table: Sequence[Sequence[str]]) -> Hints:
    """A two-column ``| field | value |`` table; ``entities`` and ``keywords`` are comma-separated."""
    values: dict[str, object] = {}
    for key, value in ((row[0].strip(), row[1].strip()) for row in table):
        values[key] = tuple(v.strip() for v in value.split(",") if v.strip()) if key in _HINT_LISTS else value
    return Hints.model_validate(values)


def hint_matches(hints: Hints, candidate: WireCandidate) -> int:
    """How many L0 hints the candidate matches by plain string contains (case-insensitive).

    This is the kit's own count, used only to check that a fixture says what its step claims.
    """
    text = candidate.text.casefold()
    terms: Iterable[str] = (*([hints.domain] if hints.domain else []), *hints.entities, *hints.keywords)
    count = sum(1 for term in terms if term and term.casefold() in text)
    if hints.source_type and candidate.source_type == hints.source_type:
        count += 1
    return count


def describe_blocks(reply: PostProcessReply | Sequence[Block]) -> str:
    """``A#0 (rank 1, q=1)``, ... : what the implementation accepted, for assertion messages."""
    blocks = reply.blocks if isinstance(reply, PostProcessReply) else reply
    if not blocks:
        return "no blocks"
    return ", ".join(
        f"{b.doc_id}#{b.chunk_index} (rank {b.original_rank}, q={b.quality_score:g})" for b in blocks
    )

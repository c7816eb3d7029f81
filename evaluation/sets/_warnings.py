"""What is suspicious about a whole labelled set, though not wrong: the words of its ``warnings``.

An error (:mod:`._validate`) is a set no measure can be computed on; a warning is a set the measures
can be computed on but may mislead about: too few answerable queries to see a small change, a query
counted twice under two ids, two chunks with one text graded differently (the measure then depends on
which the engine happens to rank first), no unanswerable query (nothing sees the low-quality flag miss).
The readers add what only they can see (a BEIR query no split judges). Each warning says the number,
names the first few ids and what to do.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence

from ._values import LabelledSet

__all__ = ["FEW_ANSWERABLE", "name_some", "set_warnings"]

#: Below this many answerable queries a paired comparison over them can show only large changes, and
#: its bootstrap interval is unreliable (a rule of thumb; the upgrade's own smallest detectable drop
#: is the precise figure for its settings).
FEW_ANSWERABLE = 30
_SHOWN = 3


def name_some(ids: Sequence[str]) -> str:
    """The first few ids, quoted, and how many more."""
    shown = ", ".join(repr(i) for i in ids[:_SHOWN])
    return shown + (f" and {len(ids) - _SHOWN} more" if len(ids) > _SHOWN else "")


def _same_text(texts: Sequence[tuple[str, str, str | None]]) -> list[list[str]]:
    """Groups of ids whose texts are equal once case and runs of whitespace are set aside, and whose
    categories are equal (one question asked in two categories is two lookups: the filter differs)."""
    # Keyed by the hash of the normalised text, not the text: a corpus's texts are not held twice. Two
    # texts colliding (about n^2 / 2^65) would only add a warning, never refuse a set.
    groups: defaultdict[tuple[int, str | None], list[str]] = defaultdict(list)
    for item_id, text, category in texts:
        groups[hash(" ".join(text.split()).casefold()), category].append(item_id)
    return [ids for ids in groups.values() if len(ids) > 1]


def _few(labelled: LabelledSet) -> list[str]:
    n = len(labelled.answerable)
    if n >= FEW_ANSWERABLE:
        return []
    return [
        f"only {n} answerable {'query' if n == 1 else 'queries'}: a mean over so few can show only large "
        f"changes and its interval is unreliable; {FEW_ANSWERABLE} or more make a comparison worth reading"
    ]


def _repeated_queries(labelled: LabelledSet) -> list[str]:
    groups = _same_text([(q.id, q.query, q.category) for q in labelled.queries])
    if not groups:
        return []
    pairs = [" = ".join(repr(i) for i in ids) for ids in groups]
    more = f" and {len(pairs) - _SHOWN} more" if len(pairs) > _SHOWN else ""
    return [
        f"{len(groups)} {'query is' if len(groups) == 1 else 'queries are'} asked under more than one id, "
        "same text and category "
        f"({', '.join(pairs[:_SHOWN])}{more}): each id counts in every mean, so that question weighs "
        "more than the others; keep one id per question"
    ]


def _twins_graded_apart(labelled: LabelledSet) -> list[str]:
    twins = _same_text([(c.evidence_key, c.text, None) for c in labelled.corpus])
    group_of = {key: tuple(ids) for ids in twins for key in ids}
    found: dict[tuple[str, ...], str] = {}
    for q in labelled.answerable:
        for key in q.relevant:
            group = group_of.get(key)
            if group and group not in found and len({q.relevant.get(k, 0) for k in group}) > 1:
                found[group] = q.id
    if not found:
        return []
    (group, qid), *_ = found.items()
    return [
        f"{len(found)} {'set' if len(found) == 1 else 'sets'} of chunks with the same text graded apart "
        f"(e.g. {' and '.join(repr(k) for k in group)} by query {qid!r}): no ranking can tell them apart, "
        "so the measure depends on which one the engine puts first; grade copies alike, or keep one"
    ]


def _no_unanswerable(labelled: LabelledSet) -> list[str]:
    if any(not q.relevant for q in labelled.queries):
        return []
    return [
        "no unanswerable query: nothing measures whether the low-quality flag is raised when nothing in "
        "the corpus answers, and calibration needs some; add queries of kind unanswerable"
    ]


def set_warnings(labelled: LabelledSet) -> tuple[str, ...]:
    """What is suspicious about the whole of ``labelled``, in a fixed order; () for a sound set."""
    return tuple(
        [
            *_few(labelled),
            *_repeated_queries(labelled),
            *_twins_graded_apart(labelled),
            *_no_unanswerable(labelled),
        ]
    )

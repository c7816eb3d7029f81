"""Shortening a failure's text without losing what it found: the middle goes, never the end.

A failure message says where it happened first (the step, the request) and what was found last
(``expected 0.75; got 0.5``): cut at the end, a line keeps the where and loses the what. So a text
over its budget keeps its beginning and its end, and says how much of the middle was left out (the
report keeps all of it).
"""

from __future__ import annotations

__all__ = ["shorten_middle"]

_HEAD_SHARE = 0.4  # of the budget, for the beginning; the rest is the end, where the finding is


def shorten_middle(text: str, limit: int) -> str:
    """``text`` within ``limit`` characters: its beginning, `` […N chars…] ``, its end."""
    if len(text) <= limit:
        return text
    gap = f" […{len(text) - limit} chars…] "
    room = max(limit - len(gap), 2)
    head = max(1, int(room * _HEAD_SHARE))
    tail = max(1, room - head)
    # Counted again with the real number of characters left out (the gap's own width changed it).
    gap = f" […{len(text) - head - tail} chars…] "
    return text[:head].rstrip() + gap + text[len(text) - tail :].lstrip()

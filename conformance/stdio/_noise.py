"""What a stdio run says about stdout lines that are not replies: each distinct line once, then one
line saying there were more; lines are remembered by digest (a noise line may be megabytes long), and
only until nothing more would be said."""

from __future__ import annotations

import hashlib
from collections.abc import Callable

from ._process import CutLine, NotUtf8Line, Overflowed

__all__ = ["NOISE_REPORTED", "NoiseReport"]

NOISE_REPORTED = 20
"""Distinct noise lines listed as warnings; then one line says there were more."""


class NoiseReport:
    """The warning, if any, a skipped stdout line deserves (the same log line per call is one)."""

    def __init__(self) -> None:
        self._seen: set[bytes] = set()

    def warning(
        self, name: str, raw: str | NotUtf8Line | CutLine | Overflowed, quote: Callable[[str], str]
    ) -> str | None:
        """The text to warn with for ``raw`` from implementation ``name``, or None (said already)."""
        if len(self._seen) > NOISE_REPORTED:
            return None  # every later line goes unlisted: no need to remember it
        line = raw if isinstance(raw, str) else _raw(raw).decode("utf-8", errors="replace")
        digest = hashlib.blake2b(line.encode("utf-8", errors="replace"), digest_size=16).digest()
        if digest in self._seen:
            return None
        self._seen.add(digest)
        if len(self._seen) == NOISE_REPORTED + 1:
            return (
                f"implementation {name!r} wrote more than {NOISE_REPORTED} different lines to stdout that "
                "are not replies; only the first ones are listed"
            )
        text = (
            f"implementation {name!r} wrote a line to stdout that is not a reply (skipped): {quote(line)}; "
            "write only protocol lines on stdout and logs to stderr, or the call fails under "
            "--strict-stdout"
        )
        if isinstance(raw, NotUtf8Line):
            text += f"; it is not UTF-8 either: {raw.describe()}"
        return text


def _raw(line: NotUtf8Line | CutLine | Overflowed) -> bytes:
    if isinstance(line, Overflowed):
        return line.describe().encode()
    return line.raw if isinstance(line, NotUtf8Line) else line.head

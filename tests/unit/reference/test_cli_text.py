"""Stored text on the terminal: control characters shown as escapes, everything else as it is."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from reference._cli import shown


@pytest.mark.parametrize(
    ("text", "printed"),
    [
        ("plain text, ünïcode 日本", "'plain text, ünïcode 日本'"),
        ("\x1b[2J", "'\\x1b[2J'"),
        ("a\rb\nc\td", "'a\\rb\\nc\\td'"),
        ("\x9b31m", "'\\x9b31m'"),
        ("\u202egnp.exe", "'\\u202egnp.exe'"),
        ("\ud800", "'\\ud800'"),
    ],
)
def test_control_characters_are_escaped(text: str, printed: str) -> None:
    assert shown(text) == printed
    assert shown(text, quote=False) == printed[1:-1]


@given(st.text())
def test_nothing_unprintable_reaches_the_terminal(text: str) -> None:
    assert shown(text, quote=False).isprintable()

"""visible_text and xml_safe_text: an implementation's control characters are shown, never obeyed."""

from __future__ import annotations

import xml.etree.ElementTree as ET

from hypothesis import given
from hypothesis import strategies as st

from conformance.boundary import visible_text, xml_safe_text


def test_terminal_escapes_are_shown_as_escapes() -> None:
    hostile = "id\x1b[2J\x1b]0;owned\x07\rdone\x9b31m\u202eevil\x7f"
    assert visible_text(hostile) == "id\\x1b[2J\\x1b]0;owned\\x07\\rdone\\x9b31m\\u202eevil\\x7f"


def test_newlines_and_tabs_stay_unless_one_line() -> None:
    assert visible_text("a\tb\nc") == "a\tb\nc"
    assert visible_text("a\tb\nc", one_line=True) == "a\\tb\\nc"


def test_printable_text_of_any_script_is_unchanged() -> None:
    text = "Zürich — 東京 ✓ 🙂 <b>&amp;</b> C:\\path"
    assert visible_text(text) == text == xml_safe_text(text)


def _xml_char(char: str) -> bool:
    """XML 1.0's Char production, written from the recommendation (section 2.2)."""
    code = ord(char)
    return (
        code in (0x9, 0xA, 0xD)
        or 0x20 <= code <= 0xD7FF
        or 0xE000 <= code <= 0xFFFD
        or 0x10000 <= code <= 0x10FFFF
    )


@given(st.text(st.characters(codec=None, min_codepoint=0, max_codepoint=0x10FFFF)))
def test_xml_safe_text_holds_only_what_xml_allows_and_parses(text: str) -> None:
    safe = xml_safe_text(text)
    assert all(_xml_char(char) for char in safe)
    element = ET.Element("failure", message=safe)
    element.text = safe
    parsed = ET.fromstring(ET.tostring(element, encoding="unicode"))
    assert parsed.get("message") == safe


@given(st.text(st.characters(codec="utf-8")))
def test_nothing_is_lost_only_controls_change(text: str) -> None:
    shown = visible_text(text)
    printable = [c for c in text if c.isprintable() or c in "\t\n"]
    # every printable character survives, in order, and each control becomes a backslash escape
    it = iter(shown)
    assert all(any(c == s for s in it) for c in printable)
    assert shown.count("\\") == text.count("\\") + sum(1 for c in text if visible_text(c) != c)
    assert "\x1b" not in shown
    assert "\x07" not in shown


def test_xml_noncharacters_are_escaped() -> None:
    assert xml_safe_text("a\ufffeb\uffff") == "a\\ufffeb\\uffff"
    assert visible_text("a\ufffe") == "a\ufffe"  # a terminal shows it as it is

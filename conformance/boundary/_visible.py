"""One rule for text the kit did not write: an implementation's ids, names, messages and stderr, a
labelled set's fields, an engine's error words.

Such text can hold control characters. On a terminal or a CI log viewer they act (``\\x1b[2J``
clears the screen, an OSC sequence sets the window title, ``\\r`` overwrites a line, a bidi override
reorders what is read); in XML 1.0 most of them are forbidden outright, so one ESC byte makes a whole
``junit.xml`` unreadable. :func:`visible_text` writes each such character as its escape (``\\x1b``,
``\\u202e``), so it is shown, never obeyed and never lost; :func:`xml_safe_text` is the same text
with what XML 1.0 forbids besides (``U+FFFE``, ``U+FFFF``) escaped too, ready for a serializer that
escapes markup (``xml.etree``). Markdown and HTML escape markup as before, after this rule.
"""

from __future__ import annotations

import re

__all__ = ["visible_text", "xml_safe_text"]

# C0 controls but tab and newline, DEL, C1 controls (``\x9b`` is a one-byte CSI), the bidi controls
# and marks (U+061C, U+200E-F, U+202A-E, U+2066-9), the line and paragraph separators some viewers
# break lines at, and lone surrogates (a UTF-8 stream cannot even print them).
_CONTROLS = "\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069\ud800-\udfff"
_SHOWN = re.compile(f"[{_CONTROLS}]")
_SHOWN_ONE_LINE = re.compile(f"[{_CONTROLS}\t\n]")
# XML 1.0's Char production allows everything else visible_text leaves, but these two noncharacters.
_XML_FORBIDDEN = re.compile("[\ufffe\uffff]")
_SHORT = {"\t": "\\t", "\n": "\\n", "\r": "\\r"}


def _escape(match: re.Match[str]) -> str:
    char = match.group(0)
    code = ord(char)
    return _SHORT.get(char) or (f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}")


def visible_text(text: str, *, one_line: bool = False) -> str:
    """``text`` with every control character written as its escape (``\\x1b``, ``\\x07``, ``\\r``,
    ``\\u202e``); tabs and newlines stay unless ``one_line`` (for an id or a name that must not forge
    a line of its own). Printable text, any script, is unchanged."""
    return (_SHOWN_ONE_LINE if one_line else _SHOWN).sub(_escape, text)


def xml_safe_text(text: str, *, one_line: bool = False) -> str:
    """:func:`visible_text`, and what else XML 1.0 forbids escaped the same way: every character of
    the result is one XML 1.0 allows (markup characters are left to the serializer)."""
    return _XML_FORBIDDEN.sub(_escape, visible_text(text, one_line=one_line))

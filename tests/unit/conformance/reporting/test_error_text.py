"""What an ERRORED scenario's message says when the error is a group of errors."""

from __future__ import annotations

from conformance.reporting._classify import error_text as _error_text


def test_a_single_error_is_its_type_and_message() -> None:
    assert _error_text(ValueError("bad input")) == "ValueError: bad input"


def test_a_group_names_every_error_inside_it_not_only_how_many() -> None:
    group = ExceptionGroup(
        "Hypothesis found 2 distinct failures in explicit examples.",
        [RuntimeError("unknown escape sequence \\s"), ExceptionGroup("inner", [KeyError("docId")])],
    )
    text = _error_text(group)
    assert text.startswith("2 distinct errors: ")
    assert "(1) RuntimeError: unknown escape sequence \\s" in text
    assert "(2) KeyError: 'docId'" in text
    assert "Hypothesis found" not in text

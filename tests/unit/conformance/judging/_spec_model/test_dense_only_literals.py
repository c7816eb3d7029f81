"""A query by primary key is read with Milvus's string escapes (issue 51: the hostile catalogue's keys
hold backslashes, quotes and newlines), so hydration by exactly the keys a dense search returned stays
hydration."""

from __future__ import annotations

import pytest

from conformance.judging._spec_model._dense_only import _literals


@pytest.mark.parametrize(
    ("text", "values"),
    [
        ('"C:\\\\temp\\\\new#0", "doc#1"', {"C:\\temp\\new#0", "doc#1"}),
        ('"say \\"cheese\\"#0"', {'say "cheese"#0'}),
        ("'O\\'Reilly\\'s#0'", {"O'Reilly's#0"}),
        ('"line\\nbreak#0"', {"line\nbreak#0"}),
        ('"ends with a backslash\\\\", 7', {"ends with a backslash\\", 7}),
        ("1, -2 ,3", {1, -2, 3}),
    ],
)
def test_literals_read_as_milvus_reads_them(text: str, values: set[object]) -> None:
    assert _literals(text) == values


@pytest.mark.parametrize("text", ['"unterminated', "id > 3", '"a" "b"', "x"])
def test_anything_but_a_list_of_literals_is_nothing(text: str) -> None:
    assert _literals(text) == set()

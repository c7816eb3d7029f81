"""The wire accepts what its page allows (docs/stdio-protocol.md): read by the codec, no process started.

Fields the protocol does not define, beside ``result`` or inside an ``error``, are kept and noted, never
failed; a UTF-8 byte-order mark before a reply is ignored with one warning (RFC 8259 lets a parser do so).
"""

from __future__ import annotations

import json

import pytest

from conformance.boundary._decline import NotApplicable
from conformance.boundary._errors import InvalidReplyError
from conformance.stdio._codec import Codec, RemoteError


def _decode(codec: Codec, operation: str, reply: dict | str, seq: int = 4) -> object:
    line = reply if isinstance(reply, str) else json.dumps(reply)
    return codec.decode("mini", operation, seq, line)


def test_a_field_beside_result_is_a_note_not_a_refusal() -> None:
    codec = Codec(validate=False)
    assert _decode(codec, "quality_score", {"seq": 4, "result": 0.5, "elapsedMs": 12}) == 0.5
    notes = codec.take_notes()
    assert len(notes) == 1
    assert "quality_score" in notes[0]
    assert "elapsedMs" in notes[0]
    assert codec.take_notes() == []  # handed over once


def test_fields_beside_and_inside_a_result_model_are_kept() -> None:
    codec = Codec(validate=False)
    reply = {"seq": 4, "result": {"hits": [], "completeness": "partial"}, "traceId": "t-1"}
    result = _decode(codec, "search", reply)
    assert result.model_extra == {"completeness": "partial"}  # the judge notes fields inside result
    assert any("traceId" in note for note in codec.take_notes())


def test_fields_beside_an_error_and_inside_it_are_said_with_it_and_it_stays_an_error() -> None:
    codec = Codec(validate=False)
    reply = {"seq": 4, "error": {"message": "boom", "retryable": False}, "elapsedMs": 3}
    error = _decode(codec, "quality_score", reply)
    assert isinstance(error, RemoteError)
    assert error.message.startswith("boom [")
    assert "elapsedMs" in error.message
    assert "retryable" in error.message
    assert "never failed" in error.message
    assert codec.take_notes() == []  # said with the error: never filed under a later scenario


def test_a_field_beside_skipped_is_said_with_the_reason_and_the_call_still_declines() -> None:
    codec = Codec(validate=False)
    with pytest.raises(NotApplicable, match=r"no engine \[.*host"):
        _decode(codec, "search", {"seq": 4, "skipped": "no engine", "host": "ci-7"})
    assert codec.take_notes() == []


def test_a_start_reply_with_fields_beside_its_result_is_accepted() -> None:
    codec = Codec(validate=False)
    info = {"name": "x", "version": "1", "capabilities": ["labels"], "vendor": "acme"}
    result = _decode(codec, "start", {"seq": 4, "result": info, "pid": 4242})
    assert result.model_extra == {"vendor": "acme"}
    assert any("pid" in note for note in codec.take_notes())


@pytest.mark.parametrize(
    "reply",
    [
        {"seq": 4, "result": 0.5, "error": {"message": "boom"}},
        {"seq": 4, "result": 0.5, "skipped": "no"},
        {"seq": 4, "skipped": "no", "error": {"message": "boom"}},
    ],
)
def test_a_reply_of_two_shapes_at_once_is_still_invalid(reply: dict) -> None:
    with pytest.raises(InvalidReplyError, match="exactly one of") as caught:
        _decode(Codec(validate=False), "quality_score", reply)
    assert caught.value.problem == "invalid"


def test_a_byte_order_mark_before_a_reply_is_ignored_with_one_warning() -> None:
    codec = Codec(validate=False)
    assert _decode(codec, "quality_score", '\ufeff{"seq": 4, "result": 0.25}') == 0.25
    warnings = codec.take_warnings()
    assert len(warnings) == 1
    assert "byte-order mark" in warnings[0]
    assert _decode(codec, "quality_score", '\ufeff{"seq": 5, "result": 0.5}', seq=5) == 0.5
    assert codec.take_warnings() == []  # said once per run, not per line


def test_a_byte_order_mark_before_a_start_reply_is_accepted() -> None:
    codec = Codec(validate=False)
    line = '\ufeff{"seq": 1, "result": {"name": "x", "version": "1", "capabilities": []}}'
    assert _decode(codec, "start", line, seq=1).name == "x"
    assert codec.take_warnings()


def test_a_byte_order_mark_does_not_make_noise_a_reply() -> None:
    with pytest.raises(InvalidReplyError) as caught:
        _decode(Codec(validate=False), "quality_score", "\ufeffstarting up")
    assert caught.value.problem == "not_json"


@pytest.mark.parametrize(
    ("line", "expected"),
    [
        ('{"seq": 4, "result": 1}', 1.0),  # any JSON number is a number
        ('{"seq": 4, "result": 1e0}', 1.0),
        ('{"seq": 4.0, "result": 0.5}', 0.5),  # an integer field as 4.0
        ('{"result": 0.5, "seq": 4}', 0.5),  # keys in any order
        ('  {"seq": 4, "result": 0.5}  ', 0.5),  # blanks around the object
    ],
)
def test_what_the_page_says_is_a_number_or_an_integer_is_read_as_one(line: str, expected: float) -> None:
    assert _decode(Codec(validate=False), "quality_score", line) == expected

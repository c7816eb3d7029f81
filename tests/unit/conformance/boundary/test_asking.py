"""``ask`` checks each reply against the type the Protocol gives its question (one table, in boundary)."""

from __future__ import annotations

from typing import Any

import pytest

from conformance.boundary._asking import ask
from conformance.boundary._errors import ConformanceError, InvalidReplyError
from conformance.boundary._protocol import REPLY_TYPES, Implementation, PostProcessReply
from conformance.stdio._messages import OPERATIONS


class _Answers:
    """Answers every question with ``answer``."""

    def __init__(self, answer: Any) -> None:
        self.answer = answer

    def __getattr__(self, name: str) -> Any:
        return lambda *args: self.answer


def test_the_table_has_every_question_of_the_protocol() -> None:
    questions = {name for name in vars(Implementation) if not name.startswith("_")} - {"close"}
    assert set(REPLY_TYPES) == questions


def test_the_stdio_wire_derives_its_replies_from_the_table() -> None:
    assert {
        "start": REPLY_TYPES["describe"],
        **dict(list(REPLY_TYPES.items())[1:]),
        "stop": None,
    } == OPERATIONS


@pytest.mark.parametrize(
    ("operation", "wrong"),
    [("quality_score", "0.5"), ("quality_score", True), ("canonicalize_label", 1), ("post_process", 0.5)],
)
def test_a_reply_of_the_wrong_type_is_an_invalid_reply(operation: str, wrong: object) -> None:
    with pytest.raises(InvalidReplyError):
        ask(_Answers(wrong), operation, object())


def test_right_replies_come_back_typed() -> None:
    assert ask(_Answers(1), "quality_score", object()) == 1.0
    reply = ask(
        _Answers({"blocks": [], "relevanceLevel": "none", "isLowQuality": True}), "post_process", object()
    )
    assert isinstance(reply, PostProcessReply)
    assert ask(_Answers(None), "prepare", object(), object()) is None


def test_a_question_the_protocol_does_not_have_is_the_kits_bug() -> None:
    with pytest.raises(ConformanceError, match="not a question of the Protocol"):
        ask(_Answers(None), "close")

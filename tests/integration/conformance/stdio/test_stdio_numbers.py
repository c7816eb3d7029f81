"""One number rule on both paths: any JSON or Python real number (numpy scalars included) is a number,
text where a number belongs is a reply error, in process and over stdio alike, in every mode; and the
judge fails it under the requirement whose value it is (R3 for qualityScore), the wire error quoted."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from conformance import ImplementationInfo, InvalidReplyError, PostProcessRequest, QualityRequest
from conformance.boundary._asking import ask
from conformance.judging._judge import Judge
from conformance.judging._spec_model import SpecViolationError
from conformance.stdio import StdioAdapter

QUALITY = QualityRequest(score_label="dense", score=1.0)
POST = PostProcessRequest(candidates=())

# Replies to quality_score and post_process with whatever JSON the test puts in REPLIES.
PROGRAM = """\
import json, sys
REPLIES = json.loads({replies!r})
for line in sys.stdin:
    m = json.loads(line)
    result = {{"name": "numbers", "version": "1", "capabilities": ["quality", "post_process"]}}
    if m["type"] in REPLIES:
        result = REPLIES[m["type"]]
    elif m["type"] == "stop":
        result = None
    print(json.dumps({{"seq": m["seq"], "result": result}}), flush=True)
"""


def _block(chunk_index: Any, rank: Any, quality: Any) -> dict[str, Any]:
    return {
        "evidenceKey": "A#0",
        "docId": "A",
        "chunkIndex": chunk_index,
        "originalRank": rank,
        "qualityScore": quality,
        "scoreLabel": "dense",
    }


def _post(quality: Any) -> dict[str, Any]:
    return {
        "blocks": [_block(0, 1, quality)],
        "relevanceLevel": "RELEVANT",
        "topQualityScore": quality,
        "isLowQuality": False,
    }


class InProcess:
    """Answers with the very Python objects it is given."""

    rqs_name = "in-process"

    def __init__(self, quality: Any, post: Any) -> None:
        self.quality, self.post = quality, post

    def quality_score(self, request: QualityRequest) -> Any:
        return self.quality

    def post_process(self, request: PostProcessRequest) -> Any:
        return self.post


def _over_stdio(tmp_path: Path, quality: Any, post: Any, *, validate: bool = False) -> StdioAdapter:
    script = tmp_path / "numbers.py"
    replies = json.dumps({"quality_score": quality, "post_process": post})
    script.write_text(PROGRAM.format(replies=replies))
    adapter = StdioAdapter([sys.executable, str(script)], timeout=10, validate=validate)
    adapter.describe()
    return adapter


@pytest.mark.parametrize(
    "number", [np.float32(0.5), np.float64(0.5), 0.5, np.int64(1), 1], ids=lambda n: type(n).__name__
)
def test_numbers_of_any_numeric_type_are_numbers_in_process(number: Any) -> None:
    post = _post(number) | {"blocks": [_block(np.int64(0), np.int32(1), number)]}
    implementation = InProcess(number, post)
    assert ask(implementation, "quality_score", QUALITY) == float(number)
    reply = ask(implementation, "post_process", POST)
    assert reply.blocks[0].quality_score == float(number)
    assert reply.blocks[0].chunk_index == 0


@pytest.mark.parametrize("number", [0.5, 1], ids=lambda n: type(n).__name__)
def test_numbers_are_numbers_over_stdio(tmp_path: Path, number: Any) -> None:
    adapter = _over_stdio(tmp_path, number, _post(number))
    try:
        assert ask(adapter, "quality_score", QUALITY) == float(number)
        reply = ask(adapter, "post_process", POST)
        assert reply.blocks[0].quality_score == float(number)
    finally:
        adapter.close()


@pytest.mark.parametrize("validate", [False, True])
def test_text_where_a_number_belongs_is_the_same_reply_error_on_both_paths(
    tmp_path: Path, validate: bool
) -> None:
    expected = "expected a number, got str '0.5'"
    implementation = InProcess("0.5", _post("0.5"))
    adapter = _over_stdio(tmp_path, "0.5", _post("0.5"), validate=validate)
    try:
        for answerer in (implementation, adapter):
            with pytest.raises(InvalidReplyError) as quality:
                ask(answerer, "quality_score", QUALITY)
            assert expected in str(quality.value)
            with pytest.raises(InvalidReplyError) as post:
                ask(answerer, "post_process", POST)
            assert expected in str(post.value)
            assert "qualityScore" in str(post.value) or "quality_score" in str(post.value)
    finally:
        adapter.close()


# -- judged: text where a number belongs fails the requirement whose value it is ---------------------

INFO = ImplementationInfo(name="numbers", version="1", capabilities=frozenset({"quality", "post_process"}))


@pytest.mark.parametrize("text", ["NaN", "0.5"])
def test_text_where_a_number_belongs_fails_its_requirement_with_the_wire_error(
    tmp_path: Path, text: str
) -> None:
    implementation = InProcess(text, _post(text))
    adapter = _over_stdio(tmp_path, text, _post(text))
    try:
        for answerer in (implementation, adapter):
            judge = Judge(answerer, INFO)
            with pytest.raises(SpecViolationError) as quality:
                judge.quality_score(QUALITY)
            assert [(v.rule.id, v.requirement) for v in quality.value.violations] == [
                ("quality-range", "single-normalizer")
            ]
            assert f"expected a number, got str {text!r}" in str(quality.value)
            with pytest.raises(SpecViolationError) as post:
                judge.post_process(POST)
            rules = {v.rule.id for v in post.value.violations}
            assert rules == {"quality-range", "top-quality"}, rules
            assert "blocks.0.qualityScore" in str(post.value)
    finally:
        adapter.close()


def test_a_flag_as_text_fails_the_gate_and_other_shapes_stay_reply_errors(tmp_path: Path) -> None:
    flag = _post(0.5) | {"isLowQuality": "false"}
    judge = Judge(InProcess(0.5, flag), INFO)
    with pytest.raises(SpecViolationError) as gate:
        judge.post_process(POST)
    assert [v.rule.id for v in gate.value.violations] == ["low-quality"]
    # An object where a number belongs, or a missing field, is no value the spec fixes: a reply error.
    for quality, post in (({"value": 0.5}, _post(0.5)), (0.5, {"blocks": [], "isLowQuality": False})):
        shapes = Judge(InProcess(quality, post), INFO)
        with pytest.raises(InvalidReplyError):
            shapes.quality_score(QUALITY) if isinstance(quality, dict) else shapes.post_process(POST)

"""Messages about a call name the request, and say "answered an error" or "crashed" as it happened; smoke
sends the hard inputs a real run may send and names the ones a program rejects."""

from __future__ import annotations

import sys
import time
from pathlib import Path

import pytest

from conformance.boundary._describe import describe_request
from conformance.boundary._errors import AdapterCallError, ImplementationProcessError
from conformance.boundary._protocol import LookupRequest, QualityRequest, SearchRequest
from conformance.commands._smoke import smoke
from conformance.commands._smoke_edges import LARGEST_K
from conformance.stdio import StdioAdapter

from ._stdio_miniatures import TEMPLATE, TOKEN
from .test_stdio_run import _mini_run

pytest_plugins = ["pytester"]

# Serves search in dense mode; answers an error to a blank or whitespace query, as the Node SDK's
# "Search data is required" did, and keeps serving. With "exit", it dies on such a query instead.
BLANK = """\
import json, os, sys
EXIT = {exit!r}
for line in sys.stdin:
    m = json.loads(line)
    seq, kind = m["seq"], m["type"]
    out = {{"seq": seq, "result": None}}
    if kind == "start":
        caps = ["search:dense"]
        out["result"] = {{"name": "blank", "version": "1", "language": "python", "capabilities": caps}}
    elif kind == "search":
        if not m["request"]["queryText"].strip():
            if EXIT:
                os._exit(4)
            out = {{"seq": seq, "error": {{"message": "Search data is required", "kind": "Error"}}}}
        else:
            out["result"] = {{"hits": []}}
    print(json.dumps(out), flush=True)
    if kind == "stop":
        break
"""


def _blank(tmp_path: Path, *, exit: bool = False) -> list[str]:
    script = tmp_path / "blank.py"
    script.write_text(BLANK.format(exit=exit))
    return [sys.executable, str(script)]


def test_smoke_names_the_blank_query_a_program_rejects_within_ten_seconds(tmp_path: Path) -> None:
    said: list[str] = []
    started = time.monotonic()
    code = smoke(_blank(tmp_path), timeout=5, say=said.append)
    took = time.monotonic() - started
    assert code == 1, said
    rejected = [line for line in said if line.startswith("REJECTS")]
    assert len(rejected) == 1, said  # the blank query; the whitespace one met the same error
    assert rejected[0].startswith("REJECTS search (dense), a blank query: ")
    assert "answered an error to search seq" in rejected[0]
    assert "query ''" in rejected[0]
    assert "Search data is required" in rejected[0]
    assert said[said.index(rejected[0]) + 1] == "  the same for a whitespace query"
    assert not any("crash" in line for line in rejected)
    assert any(line.startswith("FAIL hard inputs: ") and "2 rejected" in line for line in said), said
    assert took < 10, f"smoke took {took:.1f} s"  # the done-when of issue 35; mostly the engine's start


def test_a_program_that_answers_every_hard_input_passes_smoke(tmp_path: Path) -> None:
    script = tmp_path / "ok.py"
    script.write_text(TEMPLATE.format(fault="none", state=str(tmp_path / "state"), token=TOKEN))
    said: list[str] = []
    assert smoke([sys.executable, str(script)], timeout=5, say=said.append) == 0, said
    line = next(line for line in said if "hard inputs" in line)
    # labels: 3 aliases; quality: 5 questions; search in each mode: 6 queries, 5 categories, the
    # largest k, and in hybrid mode the two RRF ks
    assert line.startswith("ok   hard inputs: 34 sent, 34 answered"), line


def test_an_error_reply_names_the_request_and_is_no_crash(tmp_path: Path) -> None:
    adapter = StdioAdapter(_blank(tmp_path), timeout=5)
    request = SearchRequest(query_text="  ", query_vector=(1.0, 0.0), mode="dense", k=7, category="O'R\n")
    try:
        with pytest.raises(AdapterCallError) as caught:
            adapter.search(request)
    finally:
        adapter.close()
    text = str(caught.value)
    assert "answered an error to search seq 2 (mode dense, query '  ', category \"O'R\\n\", k 7)" in text
    assert "Search data is required" in text
    assert "crash" not in text


def test_a_program_that_exits_mid_call_is_still_a_crash_naming_the_request(tmp_path: Path) -> None:
    adapter = StdioAdapter(_blank(tmp_path, exit=True), timeout=5)
    request = SearchRequest(query_text="", query_vector=(1.0, 0.0), mode="dense", k=3)
    try:
        with pytest.raises(ImplementationProcessError) as caught:
            adapter.search(request)
    finally:
        adapter.close()
    text = str(caught.value)
    assert "failed during search seq 2 (mode dense, query '', no category, k 3)" in text
    assert "exited (code 4) before replying: it crashed" in text


def test_a_runs_message_names_the_request_and_says_answered_an_error(pytester: pytest.Pytester) -> None:
    report = _mini_run(pytester, "error")
    message = next(s for s in report["scenarios"] if s["id"] == "quality-first")["message"]
    assert "answered an error to quality_score seq 2 (scoreLabel 'dense', score 1.0" in message, message
    assert "ValueError: bad label" in message
    assert "crash" not in message
    crashed = _mini_run(pytester, "crash")
    message = next(s for s in crashed["scenarios"] if s["id"] == "quality-first")["message"]
    assert "failed during quality_score seq 2 (scoreLabel 'dense'" in message, message
    assert "it crashed" in message


def test_requests_are_described_by_their_deciding_fields() -> None:
    lookup = LookupRequest(query_text="x" * 50, query_vector=(1.0,), mode="hybrid", category="产品", rrf_k=1)
    text = describe_request("lookup", 9, {"request": lookup})
    assert text == (
        "lookup seq 9 (mode hybrid, query 'xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx…' (50 characters), "
        "category '产品', retrieveK 20, rrfK 1)"
    )
    quality = QualityRequest(score_label="rrf_fused", score=0.5, original_rank=2, batch_size=3)
    assert describe_request("quality_score", 1, {"request": quality}) == (
        "quality_score seq 1 (scoreLabel 'rrf_fused', score 0.5, originalRank 2, batchSize 3)"
    )
    assert describe_request("stop", 4, {}) == "stop seq 4"


def test_smoke_asks_for_the_largest_k_a_run_does() -> None:
    from conformance.corpus._knowledge_base import generate

    kb = generate(1, scenario_dim=9, scenario_vectors=[(1.0,) + (0.0,) * 8])
    assert kb.max_k == LARGEST_K


def test_a_reply_that_breaks_the_spec_names_the_request_and_its_seq(tmp_path: Path) -> None:
    from conformance.judging._judge import Judge
    from conformance.judging._spec_model import SpecViolationError

    script = tmp_path / "half.py"  # answers 0.5 to every quality question
    script.write_text(TEMPLATE.format(fault="none", state=str(tmp_path / "state"), token=TOKEN))
    adapter = StdioAdapter([sys.executable, str(script)], timeout=5)
    try:
        judge = Judge(adapter, adapter.describe())
        with pytest.raises(SpecViolationError) as caught:
            judge.quality_score(QualityRequest(score_label="dense", score=0.0))
    finally:
        adapter.close()
    text = str(caught.value)
    assert text.startswith(
        "the reply to quality_score seq 2 (scoreLabel 'dense', score 0.0, originalRank 1"
    ), text


def test_an_in_process_adapter_that_raises_names_the_request() -> None:
    from conformance.boundary._asking import ask

    class Raises:
        def search(self, request: SearchRequest) -> None:
            raise ValueError("no BM25 here")

    request = SearchRequest(query_text="q", query_vector=(1.0,), mode="hybrid", k=4, category="a\\b")
    with pytest.raises(AdapterCallError) as caught:
        ask(Raises(), "search", request)
    text = str(caught.value)
    assert "raised ValueError in search (mode hybrid, query 'q', category 'a\\\\b', k 4, rrfK 60)" in text
    assert "answered" not in text


def test_smoke_says_a_program_that_dies_on_a_blank_query_crashed_and_goes_on(tmp_path: Path) -> None:
    said: list[str] = []
    assert smoke(_blank(tmp_path, exit=True), timeout=5, say=said.append) == 1
    (rejected,) = [line for line in said if line.startswith("REJECTS")]
    assert "failed during search seq" in rejected
    assert "query ''" in rejected
    assert "exited (code 4) before replying: it crashed" in rejected
    # Restarted after each crash, the program answers every other hard input.
    assert any(line.startswith("FAIL hard inputs: 12 sent, 10 answered, 2 rejected") for line in said), said

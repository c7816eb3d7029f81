"""Fault miniatures over stdio: tiny Python implementations that crash, hang, babble or misreply.

Each one must end its own call with the right error and leave the adapter usable for the next call.
Only a dead process, a hang or unreadable output restarts the program and counts toward the limit.
"""

from __future__ import annotations

import shlex
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from conformance import Corpus, MilvusEndpoint, QualityRequest, SearchRequest
from conformance.boundary._errors import (
    AdapterCallError,
    AdapterLoadError,
    ImplementationProcessError,
    InvalidReplyError,
)
from conformance.commands._smoke import advice_for
from conformance.stdio import NotApplicable, RemoteError, StdioAdapter

from ._stdio_miniatures import TEMPLATE, TOKEN


def _adapter(tmp_path: Path, fault: str, *, timeout: float = 5.0, **options: Any) -> StdioAdapter:
    script = tmp_path / f"fault_{fault}.py"
    state = tmp_path / "state.txt"
    script.write_text(TEMPLATE.format(fault=fault, state=str(state), token=TOKEN))
    adapter = StdioAdapter([sys.executable, str(script)], timeout=timeout, **options)
    adapter.describe()
    return adapter


def _prepare(adapter: StdioAdapter) -> None:
    endpoint = MilvusEndpoint(uri="http://127.0.0.1:1", token=TOKEN, collection_prefix="rqs_t_")
    adapter.prepare(endpoint, Corpus(name="c", dim=2, chunks=()))


def _state(tmp_path: Path) -> list[str]:
    return (tmp_path / "state.txt").read_text().splitlines()


QUALITY = QualityRequest(score_label="dense", score=1.0)
SEARCH = SearchRequest(query_text="q", query_vector=(1.0, 0.0), mode="dense", k=1)


def test_a_crash_errors_the_call_with_stderr_and_restarts_with_the_last_prepare(tmp_path: Path) -> None:
    adapter = _adapter(tmp_path, "crash")
    try:
        _prepare(adapter)
        with pytest.raises(ImplementationProcessError) as caught:
            adapter.quality_score(QUALITY)
        message = str(caught.value)
        assert "exited (code 3)" in message
        assert "about to fail" in message  # the stderr tail
        assert TOKEN not in message
        assert "***" in message
        assert adapter.canonicalize_label("rrf_fused") == "hybrid"  # restarted
        assert _state(tmp_path) == ["start", "prepare token-ok", "start"]  # labels need no corpus
        assert adapter.search(SEARCH).hits == ()
        # Before its first search, the restarted program gets the last corpus again, token intact.
        assert _state(tmp_path) == ["start", "prepare token-ok", "start", "prepare token-ok"]
    finally:
        adapter.close()


def test_a_hang_is_killed_at_the_timeout(tmp_path: Path) -> None:
    adapter = _adapter(tmp_path, "hang", timeout=1.0)
    try:
        started = time.monotonic()
        with pytest.raises(ImplementationProcessError, match=r"no reply within 1 s; the process was killed"):
            adapter.quality_score(QUALITY)
        assert time.monotonic() - started < 3.0
        assert adapter.canonicalize_label("rrf_fused") == "hybrid"
    finally:
        adapter.close()


def test_a_schema_invalid_reply_errors_the_call_and_the_program_keeps_serving(tmp_path: Path) -> None:
    adapter = _adapter(tmp_path, "invalid")
    try:
        for _ in range(4):  # more than the restart limit: an invalid reply is not a dead program
            with pytest.raises(
                InvalidReplyError, match=r"does not fit the quality_score reply's shape: result: "
            ) as caught:
                adapter.quality_score(QUALITY)
            assert '"result": {"quality": 0.5}}' in str(caught.value)  # the line, quoted
        assert adapter.canonicalize_label("rrf_fused") == "hybrid"
        assert _state(tmp_path) == ["start"]  # never restarted
    finally:
        adapter.close()


def test_a_reply_without_seq_is_invalid_and_not_a_restart(tmp_path: Path) -> None:
    adapter = _adapter(tmp_path, "noseq")
    try:
        with pytest.raises(InvalidReplyError, match=r"answers seq None, the request was seq \d+"):
            adapter.quality_score(QUALITY)
        assert adapter.canonicalize_label("rrf_fused") == "hybrid"
        assert _state(tmp_path) == ["start"]
    finally:
        adapter.close()


def test_a_reply_to_a_later_request_is_out_of_step_and_restarts(tmp_path: Path) -> None:
    adapter = _adapter(tmp_path, "ahead")
    try:
        with pytest.raises(InvalidReplyError, match=r"answers seq \d+, the request was seq \d+") as caught:
            adapter.quality_score(QUALITY)
        assert "copy the request's" in advice_for(caught.value, "quality_score")
        assert adapter.canonicalize_label("rrf_fused") == "hybrid"
        assert _state(tmp_path) == ["start", "start"]
    finally:
        adapter.close()


def test_stdout_noise_is_skipped_and_reported_once(tmp_path: Path) -> None:
    seen: list[str] = []
    adapter = _adapter(tmp_path, "noise", on_warning=seen.append)
    try:
        assert [adapter.quality_score(QUALITY) for _ in range(3)] == [0.5, 0.5, 0.5]
        assert len(seen) == 1, seen  # the same line three times: one warning
        assert "'computing quality...'" in seen[0]
        assert "stderr" in seen[0]
        assert adapter.warnings == seen
    finally:
        adapter.close()


def test_strict_stdout_makes_noise_the_calls_error_without_a_restart(tmp_path: Path) -> None:
    adapter = _adapter(tmp_path, "noise", strict_stdout=True)
    try:
        with pytest.raises(InvalidReplyError, match=r"'computing quality...' is not JSON.*--strict-stdout"):
            adapter.quality_score(QUALITY)
        # The reply that followed the noise is skipped as stale; the next call reads its own.
        assert adapter.canonicalize_label("rrf_fused") == "hybrid"
        assert _state(tmp_path) == ["start"]
        assert adapter.warnings == []
    finally:
        adapter.close()


def test_a_line_that_never_becomes_a_reply_is_a_hang(tmp_path: Path) -> None:
    seen: list[str] = []
    adapter = _adapter(tmp_path, "garbage", timeout=1.0, on_warning=seen.append)
    try:
        with pytest.raises(ImplementationProcessError, match=r"no reply within 1 s"):
            adapter.quality_score(QUALITY)
        assert "'this is not json'" in seen[0]
        assert adapter.canonicalize_label("rrf_fused") == "hybrid"
    finally:
        adapter.close()


def test_a_flood_of_noise_is_unreadable_output_and_restarts(tmp_path: Path) -> None:
    seen: list[str] = []
    adapter = _adapter(tmp_path, "flood", on_warning=seen.append)
    try:
        with pytest.raises(InvalidReplyError, match=r"more than 200 lines on stdout that are not replies"):
            adapter.quality_score(QUALITY)
        assert len(seen) == 21  # 20 distinct lines listed, then one line saying there were more
        assert "only the first ones are listed" in seen[-1]
        assert adapter.canonicalize_label("rrf_fused") == "hybrid"
        assert _state(tmp_path) == ["start", "start"]
    finally:
        adapter.close()


def test_slow_but_within_the_timeout_answers(tmp_path: Path) -> None:
    adapter = _adapter(tmp_path, "slow", timeout=3.0)
    try:
        assert adapter.quality_score(QUALITY) == 0.5
    finally:
        adapter.close()


def test_skipped_is_not_applicable_with_the_reason(tmp_path: Path) -> None:
    adapter = _adapter(tmp_path, "skip")
    try:
        with pytest.raises(NotApplicable, match="NOT APPLICABLE: no normalizer in this build"):
            adapter.quality_score(QUALITY)
        assert adapter.canonicalize_label("dense") == "dense"
    finally:
        adapter.close()


def test_an_error_reply_is_an_adapter_call_error(tmp_path: Path) -> None:
    adapter = _adapter(tmp_path, "error")
    try:
        with pytest.raises(AdapterCallError, match="ValueError: bad label") as caught:
            adapter.quality_score(QUALITY)
        assert isinstance(caught.value.cause, RemoteError)
    finally:
        adapter.close()


@pytest.mark.parametrize("validate", [False, True])
def test_a_number_sent_as_text_is_a_reply_error_in_every_mode(tmp_path: Path, validate: bool) -> None:
    adapter = _adapter(tmp_path, "string-number", validate=validate)
    try:
        with pytest.raises(InvalidReplyError, match=r"expected a number, got str '0\.5'"):
            adapter.quality_score(QUALITY)
    finally:
        adapter.close()


def test_three_crashes_in_a_row_stop_asking_that_capability_only(tmp_path: Path) -> None:
    adapter = _adapter(tmp_path, "crash")
    try:
        for _ in range(3):
            with pytest.raises(ImplementationProcessError, match="exited"):
                adapter.quality_score(QUALITY)
        started = time.monotonic()
        reasons = set()
        for _ in range(2):
            with pytest.raises(ImplementationProcessError, match="stopped asking it for quality") as caught:
                adapter.quality_score(QUALITY)
            reasons.add(str(caught.value))
        assert time.monotonic() - started < 0.5  # answered at once, no restart
        assert len(reasons) == 1  # one shared reason
        assert adapter.canonicalize_label("rrf_fused") == "hybrid"  # other capabilities still served
    finally:
        adapter.close()


def test_a_program_that_cannot_be_restarted_fails_every_later_call(tmp_path: Path) -> None:
    adapter = _adapter(tmp_path, "crash-then-banner")
    try:
        with pytest.raises(ImplementationProcessError, match="exited"):
            adapter.quality_score(QUALITY)
        with pytest.raises(ImplementationProcessError, match=r"restarting it failed too.*my-impl v1 ready"):
            adapter.canonicalize_label("dense")
        with pytest.raises(ImplementationProcessError, match="restarting it failed too"):
            adapter.canonicalize_label("dense")
    finally:
        adapter.close()


def test_a_banner_on_stdout_fails_the_handshake_with_advice(tmp_path: Path) -> None:
    with pytest.raises(AdapterLoadError, match="'my-impl v1 ready' is not JSON") as caught:
        _adapter(tmp_path, "banner")
    assert "did you print a banner" in advice_for(caught.value, "start")


def test_a_missing_program_fails_to_load(tmp_path: Path) -> None:
    adapter = StdioAdapter([str(tmp_path / "nope")], timeout=2.0)
    with pytest.raises(AdapterLoadError, match="cannot run") as caught:
        adapter.describe()
    assert "PATH" in advice_for(caught.value, "start")


def test_command_strings_are_split_like_a_shell(tmp_path: Path) -> None:
    adapter = _adapter(tmp_path, "none")
    command = f"{shlex.quote(sys.executable)} {shlex.quote(adapter.argv[-1])}"
    adapter.close()
    again = StdioAdapter(command, timeout=5.0)
    try:
        assert again.describe().name == "mini"
        assert again.argv == [sys.executable, adapter.argv[-1]]
    finally:
        again.close()


def test_close_stops_the_child(tmp_path: Path) -> None:
    adapter = _adapter(tmp_path, "none")
    child = adapter._child
    assert child is not None
    adapter.close()
    assert child.proc.poll() is not None
    with pytest.raises(ImplementationProcessError, match="closed"):
        adapter.canonicalize_label("dense")

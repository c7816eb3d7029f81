"""Fault miniatures over stdio: tiny Python implementations that crash, hang, babble or misreply.

Each one must end its own call with the right error and leave the adapter usable for the next call.
"""

from __future__ import annotations

import shlex
import sys
import time
from pathlib import Path

import pytest

from conformance import Corpus, MilvusEndpoint, QualityRequest
from conformance._errors import (
    AdapterCallError,
    AdapterLoadError,
    ImplementationProcessError,
    InvalidReplyError,
)
from conformance.stdio import NotApplicable, RemoteError, StdioAdapter
from conformance.stdio._smoke import advice_for

from ._stdio_miniatures import TEMPLATE, TOKEN


def _adapter(tmp_path: Path, fault: str, *, timeout: float = 5.0, validate: bool = False) -> StdioAdapter:
    script = tmp_path / f"fault_{fault}.py"
    state = tmp_path / "state.txt"
    script.write_text(TEMPLATE.format(fault=fault, state=str(state), token=TOKEN))
    adapter = StdioAdapter([sys.executable, str(script)], timeout=timeout, validate=validate)
    adapter.describe()
    return adapter


def _prepare(adapter: StdioAdapter) -> None:
    endpoint = MilvusEndpoint(uri="http://127.0.0.1:1", token=TOKEN, collection_prefix="rqs_t_")
    adapter.prepare(endpoint, Corpus(name="c", dim=2, chunks=()))


QUALITY = QualityRequest(score_label="dense", score=1.0)


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
        prepares = (tmp_path / "state.txt").read_text().splitlines()
        assert prepares == ["prepare token-ok", "prepare token-ok"]  # re-sent, token intact
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


def test_a_garbage_line_is_quoted(tmp_path: Path) -> None:
    adapter = _adapter(tmp_path, "garbage")
    try:
        with pytest.raises(InvalidReplyError, match=r"the line 'this is not json' is not JSON") as caught:
            adapter.quality_score(QUALITY)
        assert "stderr" in str(caught.value)  # the advice: logs go to stderr
        assert adapter.canonicalize_label("rrf_fused") == "hybrid"
    finally:
        adapter.close()


def test_a_schema_invalid_reply_names_the_field(tmp_path: Path) -> None:
    adapter = _adapter(tmp_path, "invalid")
    try:
        with pytest.raises(InvalidReplyError, match=r"not a valid quality_score reply: result: ") as caught:
            adapter.quality_score(QUALITY)
        assert '"result": {"quality": 0.5}}' in str(caught.value)  # the line, quoted
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


def test_validate_refuses_coercion_that_the_default_mode_allows(tmp_path: Path) -> None:
    lax = _adapter(tmp_path, "string-number")
    strict = _adapter(tmp_path, "string-number", validate=True)
    try:
        assert lax.quality_score(QUALITY) == 0.5
        with pytest.raises(InvalidReplyError, match="valid number"):
            strict.quality_score(QUALITY)
    finally:
        lax.close()
        strict.close()


def test_three_failures_in_a_row_stop_the_restarts(tmp_path: Path) -> None:
    adapter = _adapter(tmp_path, "crash")
    try:
        for _ in range(3):
            with pytest.raises(ImplementationProcessError, match="exited"):
                adapter.quality_score(QUALITY)
        started = time.monotonic()
        with pytest.raises(ImplementationProcessError, match="stopped restarting"):
            adapter.canonicalize_label("dense")
        assert time.monotonic() - started < 0.5
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

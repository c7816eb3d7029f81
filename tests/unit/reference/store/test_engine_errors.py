"""Engine failures as the reference's typed errors: a missed deadline, a full disk, a released
collection. Exceptions are made here as the engine's client raises them; no engine runs."""

from __future__ import annotations

import errno

import grpc
import pytest
from pymilvus.exceptions import MilvusException

from reference import EngineTimeoutError, StoreError
from reference.store._errors import engine_errors, not_loaded


class _Deadline(grpc.RpcError):
    def code(self) -> grpc.StatusCode:
        return grpc.StatusCode.DEADLINE_EXCEEDED

    def details(self) -> str:
        return "Deadline Exceeded"


@pytest.mark.parametrize(
    "exc",
    [_Deadline(), MilvusException(code=1, message="wait for loading collection timeout, collection: c")],
    ids=["grpc-deadline", "pymilvus-wait"],
)
def test_a_missed_deadline_is_the_typed_timeout(exc: Exception) -> None:
    with (
        pytest.raises(EngineTimeoutError) as info,
        engine_errors("run the dense search", collection="c", deadline=2.5),
    ):
        raise exc
    assert info.value.deadline_seconds == 2.5
    assert info.value.operation == "run the dense search"
    assert "within 2.5 s" in str(info.value)
    assert "MILVUS_DEADLINE_SECONDS" in str(info.value)
    assert isinstance(info.value, StoreError)


@pytest.mark.parametrize(
    "exc",
    [
        OSError(errno.ENOSPC, "No space left on device"),
        MilvusException(code=1, message="[Errno 28] No space left on device"),
    ],
)
def test_a_full_disk_is_one_line_without_the_engine_s_traceback(exc: Exception) -> None:
    with pytest.raises(StoreError) as info, engine_errors("write 3 chunks", collection="c"):
        raise exc
    message = str(info.value)
    assert "disk where the engine keeps its data is full" in message
    assert "\n" not in message
    assert info.value.__cause__ is None
    assert info.value.__suppress_context__


def test_engine_messages_are_scrubbed_of_every_secret() -> None:
    with (
        pytest.raises(StoreError) as info,
        engine_errors("count chunks", collection="c", secrets=("tok", "pw")),
    ):
        raise MilvusException(code=2, message="auth tok and pw refused")
    assert "tok" not in str(info.value)
    assert "pw" not in str(info.value)


def test_not_loaded_is_what_a_restarted_engine_answers() -> None:
    assert not_loaded(MilvusException(code=101, message="collection not loaded"))
    assert not_loaded(
        MilvusException(code=65535, message="Collection 'x' is in state 'released'; call load()")
    )
    assert not not_loaded(MilvusException(code=2, message="Fail connecting to server"))
    assert not not_loaded(None)

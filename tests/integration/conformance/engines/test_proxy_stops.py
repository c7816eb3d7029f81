"""The recording proxy's stop is bounded at its root (issue 45, case 4): a call it is forwarding to an
engine that never answers does not keep a thread alive after ``close()``. Interpreter exit joins such a
thread, and one blocked on its engine for the forwarding cap (minutes) hung an interrupted selftest."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import grpc
import pytest

from conformance.engines._proxy import THREAD_PREFIX, RecordingProxy

METHOD = "/milvus.proto.milvus.MilvusService/GetVersion"
# Not a speed target: "stopped" against "blocked for the forwarding cap (300 s)".
STOPPED_SECONDS = 20.0


class _Stalled:
    """An upstream that takes every call and never answers it (until the test lets it go)."""

    def __init__(self) -> None:
        self.release = threading.Event()
        self.arrived = threading.Event()

    def service(self, details: Any) -> Any:
        def never(request: bytes, context: Any) -> bytes:
            self.arrived.set()
            self.release.wait(120)
            return b""

        return grpc.unary_unary_rpc_method_handler(never)


@pytest.fixture
def stalled() -> Iterator[tuple[_Stalled, int]]:
    handler = _Stalled()
    server = grpc.server(ThreadPoolExecutor(max_workers=4))
    server.add_generic_rpc_handlers((handler,))
    port = server.add_insecure_port("127.0.0.1:0")
    server.start()
    try:
        yield handler, port
    finally:
        handler.release.set()
        server.stop(grace=None)


def _proxy_threads() -> list[threading.Thread]:
    # Its workers are daemon threads that interpreter exit still joins (concurrent.futures does).
    return [t for t in threading.enumerate() if t.name.startswith(THREAD_PREFIX) and t.is_alive()]


class _SecondSignal:
    """The server's stop, cut short as a second Ctrl-C or SIGTERM during its grace would."""

    def __init__(self, server: Any) -> None:
        self._server = server

    def stop(self, grace: float | None) -> Any:
        self._server.stop(grace=None)
        raise KeyboardInterrupt("SIGTERM")


@pytest.mark.parametrize("interrupted", [False, True], ids=["plain stop", "stop cut short by a signal"])
def test_close_ends_the_thread_forwarding_to_an_engine_that_never_answers(
    stalled: tuple[_Stalled, int], interrupted: bool
) -> None:
    upstream, port = stalled
    assert not _proxy_threads(), "another proxy's threads are alive in this process"
    proxy = RecordingProxy(f"127.0.0.1:{port}")
    proxy.start()
    client = grpc.insecure_channel(proxy.uri.removeprefix("http://"))
    answers: list[object] = []

    def ask() -> None:
        try:
            answers.append(client.unary_unary(METHOD)(b"", timeout=120))
        except grpc.RpcError as exc:
            answers.append(exc.code())

    asker = threading.Thread(target=ask, daemon=True)
    asker.start()
    assert upstream.arrived.wait(30), "the call never reached the upstream"
    assert _proxy_threads(), "the proxy forwards on threads of its own name"
    if interrupted:
        proxy._server = _SecondSignal(proxy._server)
        with pytest.raises(KeyboardInterrupt):
            proxy.close()
    else:
        proxy.close()
    deadline = time.monotonic() + STOPPED_SECONDS
    while _proxy_threads() and time.monotonic() < deadline:
        time.sleep(0.1)
    left = _proxy_threads()
    client.close()
    assert not left, f"still alive {STOPPED_SECONDS:g} s after close(): {[t.name for t in left]}"
    asker.join(10)
    assert answers, "the client's call never ended"
    assert isinstance(answers[0], grpc.StatusCode), "the client was answered as if the engine had replied"

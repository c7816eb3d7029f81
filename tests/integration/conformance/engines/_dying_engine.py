"""A Milvus that dies midway, for tests: a gRPC proxy that forwards a number of searches, then closes its
port and drops every connection, the way a crashed or unplugged server looks to all its clients.

It is the kit's recording proxy (which forwards every call as raw bytes) with a budget in its upstream
channel: the search after the last one it may forward is not forwarded, and the server stops at once,
cancelling what is in flight. Whoever connects afterwards is refused.
"""

from __future__ import annotations

import threading
from typing import Any

from conformance.engines._proxy import RecordingProxy

__all__ = ["DyingEngine"]

_SEARCHES = ("Search", "HybridSearch", "SearchByPrimaryKeys")


class DyingEngine(RecordingProxy):
    """Forward ``127.0.0.1:<free port>`` to ``target`` for ``searches`` searches, then die."""

    def __init__(self, target: str, *, searches: int) -> None:
        super().__init__(target)
        self.budget = searches
        self.searches = 0
        self.died = threading.Event()

    def start(self) -> str:
        uri = super().start()
        self._channel = _DyingChannel(self._channel, self)
        return uri

    def _before(self, method: str) -> None:
        """Count a search; past the budget, die. Never forward a call after the end."""
        with self._lock:
            self.searches += method.rsplit("/", 1)[-1] in _SEARCHES
            dies = self.searches > self.budget and not self.died.is_set()
        if dies:
            self.died.set()
            self._server.stop(grace=None)  # the listening port closes, every connection drops
        if self.died.is_set():
            raise ConnectionAbortedError("the engine died")  # aborts the call (the server is stopping)


class _DyingChannel:
    def __init__(self, channel: Any, engine: DyingEngine) -> None:
        self._channel = channel
        self._engine = engine

    def unary_unary(self, method: str) -> Any:
        forward = self._channel.unary_unary(method)

        def call(request: bytes, **kwargs: Any) -> bytes:
            self._engine._before(method)
            return forward(request, **kwargs)

        return call

    def unary_stream(self, method: str) -> Any:
        forward = self._channel.unary_stream(method)

        def call(request: bytes, **kwargs: Any) -> Any:
            self._engine._before(method)
            return forward(request, **kwargs)

        return call

    def __getattr__(self, name: str) -> Any:
        return getattr(self._channel, name)

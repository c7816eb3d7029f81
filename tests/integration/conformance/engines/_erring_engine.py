"""A Milvus that is up but answers some searches with an error, for tests: the way an overloaded or
half-broken server looks to its clients.

It is the kit's recording proxy with a twist in its upstream channel: every ``every``-th search
(``Search`` or ``HybridSearch``, from any client) is not forwarded; the reply is a ``SearchResults``
whose status says ``code 65535`` (Milvus's "unexpected error"), which pymilvus raises as a
``MilvusException``, as it does for a real server's in-band error.
"""

from __future__ import annotations

import threading
from typing import Any

from conformance.engines._proxy import RecordingProxy

__all__ = ["ErringEngine"]

_SEARCHES = ("/milvus.proto.milvus.MilvusService/Search", "/milvus.proto.milvus.MilvusService/HybridSearch")
REASON = "injected by the test: the engine is overloaded"


class ErringEngine(RecordingProxy):
    """Forward ``127.0.0.1:<free port>`` to ``target``, answering every ``every``-th search with an error."""

    def __init__(self, target: str, *, every: int) -> None:
        super().__init__(target)
        self.every = every
        self.searches = 0
        self.errors = 0
        self._count = threading.Lock()

    def start(self) -> str:
        uri = super().start()
        self._channel = _ErringChannel(self._channel, self)
        return uri

    def _erring(self) -> bool:
        with self._count:
            self.searches += 1
            erring = self.searches % self.every == 0
            self.errors += erring
            return erring


class _ErringChannel:
    def __init__(self, channel: Any, engine: ErringEngine) -> None:
        self._channel = channel
        self._engine = engine

    def unary_unary(self, method: str) -> Any:
        forward = self._channel.unary_unary(method)
        if method not in _SEARCHES:
            return forward

        def call(request: bytes, **kwargs: Any) -> bytes:
            if self._engine._erring():
                return _error_reply()
            return forward(request, **kwargs)

        return call

    def __getattr__(self, name: str) -> Any:
        return getattr(self._channel, name)


def _error_reply() -> bytes:
    from pymilvus.grpc_gen import common_pb2, milvus_pb2

    status = common_pb2.Status(error_code=common_pb2.UnexpectedError, code=65535, reason=REASON)
    return milvus_pb2.SearchResults(status=status).SerializeToString()

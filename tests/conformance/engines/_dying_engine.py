"""A Milvus that dies midway, for tests: a gRPC proxy that forwards a number of searches, then closes its
port and drops every connection, the way a crashed or unplugged server looks to all its clients.

It is the kit's recording proxy (which forwards every call as raw bytes) with a budget: the search after
the last one it may forward is not forwarded, and the server stops at once, cancelling what is in
flight. Whoever connects afterwards is refused.
"""

from __future__ import annotations

import threading

from conformance.engines._proxy import RecordedCall, RecordingProxy

__all__ = ["DyingEngine"]


class DyingEngine(RecordingProxy):
    """Forward ``127.0.0.1:<free port>`` to ``target`` for ``searches`` searches, then die."""

    def __init__(self, target: str, *, searches: int) -> None:
        super().__init__(target)
        self.budget = searches
        self.searches = 0
        self.died = threading.Event()

    def _record(self, call: RecordedCall) -> None:
        super()._record(call)
        with self._lock:
            self.searches += call.is_search
            dies = self.searches > self.budget and not self.died.is_set()
        if dies:
            self.died.set()
            self._server.stop(grace=None)  # the listening port closes, every connection drops
        if self.died.is_set():
            # Never forward a call after the end: raising here aborts it (the server is stopping anyway).
            raise ConnectionAbortedError("the engine died")

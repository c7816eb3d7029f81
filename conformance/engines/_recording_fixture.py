"""Fixtures that route the implementation's Milvus traffic through the recording proxy.

The implementation is handed :func:`rqs_adapter_endpoint` (the engine's endpoint with ``uri`` swapped
for the proxy's); the kit's own oracle keeps using ``rqs_engine`` directly, so the record holds the
implementation's calls only. A step asks what happened during one call like this::

    mark = rqs_recorder.mark()
    reply = ask(rqs_implementation, "search", request, expect=SearchReply)
    problems = non_dense_searches(rqs_recorder.calls_since(mark))

Registered by the plugin. Nothing here starts before a scenario asks for it.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

import pytest

if TYPE_CHECKING:
    from .._protocol import MilvusEndpoint
    from ._proxy import RecordingProxy

__all__ = ["rqs_adapter_endpoint", "rqs_recorder"]


@pytest.fixture(scope="session")
def rqs_recorder(rqs_engine: Any) -> Iterator[RecordingProxy]:
    """The session's recording proxy in front of the engine the kit provisioned."""
    from ._proxy import RecordingProxy

    proxy = RecordingProxy(rqs_engine.endpoint.uri)
    proxy.start()
    try:
        yield proxy
    finally:
        proxy.close()


@pytest.fixture(scope="session")
def rqs_adapter_endpoint(rqs_engine: Any, rqs_recorder: RecordingProxy) -> MilvusEndpoint:
    """Where the implementation finds Milvus: the engine's endpoint, reached through the proxy."""
    endpoint: MilvusEndpoint = rqs_engine.endpoint
    return endpoint.model_copy(update={"uri": rqs_recorder.uri})

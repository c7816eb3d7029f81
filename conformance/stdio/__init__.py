"""Implementations in any language: one JSON object per line over the child's stdin and stdout.

- ``_streams``: a pipe read in bytes, never in lines: what is kept of any flood is bounded;
- ``_process``: the child process: lines in and out, stderr kept as a tail, killable at once, started
  without Milvus credentials in its environment;
- ``_noise``: what a run says about stdout lines that are not replies, each once;
- ``_codec``: lines to messages and back, the checks on every reply, the token kept out of text;
- ``_messages``: the protocol's messages, built from the boundary's wire models (:data:`PROTOCOL_VERSION`);
- ``_schema``: the protocol's JSON Schema, generated from those models (``rag-conformance schema``);
- ``_adapter``: :class:`StdioAdapter`, the Protocol spoken to a child; every failure ends one call.

Below the adapters layer; it imports only the boundary and the spec.
"""

from ._adapter import NotApplicable, StdioAdapter
from ._codec import RemoteError
from ._messages import PROTOCOL_VERSION, KitMessage, kit_messages, reply_adapter
from ._schema import protocol_schemas, write_schemas

__all__ = [
    "PROTOCOL_VERSION",
    "KitMessage",
    "NotApplicable",
    "RemoteError",
    "StdioAdapter",
    "kit_messages",
    "protocol_schemas",
    "reply_adapter",
    "write_schemas",
]

"""Implementations in any language: one JSON object per line over the child's stdin and stdout."""

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

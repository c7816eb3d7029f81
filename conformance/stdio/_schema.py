"""JSON Schema of the stdio protocol, generated from the message models (never written by hand)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from ._messages import OPERATIONS, PROTOCOL_VERSION, kit_messages, reply_adapter

__all__ = ["protocol_schemas", "write_schemas"]

_DIALECT = "https://json-schema.org/draft/2020-12/schema"


def protocol_schemas() -> dict[str, dict[str, Any]]:
    """File name -> schema: one for every line the kit writes, one per operation for its replies."""
    request = kit_messages().json_schema(mode="serialization", by_alias=True)
    schemas = {
        "request.schema.json": _titled(
            request,
            f"rag-conformance stdio protocol v{PROTOCOL_VERSION}: a line the kit writes",
        )
    }
    for operation in OPERATIONS:
        schema = reply_adapter(operation).json_schema(mode="validation", by_alias=True)
        schemas[f"reply.{operation}.schema.json"] = _titled(
            schema,
            f"rag-conformance stdio protocol v{PROTOCOL_VERSION}: a reply line to {operation!r}",
        )
    return schemas


def write_schemas(out: str | Path) -> list[Path]:
    """Write :func:`protocol_schemas` into ``out`` (created if needed); return the paths written."""
    directory = Path(out)
    directory.mkdir(parents=True, exist_ok=True)
    written = []
    for name, schema in protocol_schemas().items():
        path = directory / name
        path.write_text(json.dumps(schema, indent=2, sort_keys=True) + "\n", encoding="utf-8")
        written.append(path)
    return written


def _titled(schema: dict[str, Any], title: str) -> dict[str, Any]:
    return {"$schema": _DIALECT, "title": title, **schema}

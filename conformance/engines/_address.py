"""The kit's one engine vocabulary: every subcommand and the pytest option name engines this way.

:func:`parse_engine_address` turns ``lite``, ``lite:<dir>``, ``lite-2.5.1``, ``milvus-2.3.5``, ``uri``,
``uri:<uri>``, ``container`` or ``container:<image>`` into a small value object, and :data:`ENGINE_HELP`
is the one help text that lists them. Kept free of pymilvus and testcontainers so the pytest plugin can
validate the option cheaply.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from ..boundary._errors import EngineError
from ..boundary._redact import redact_uri, register_uri_secrets
from ._local import LOCAL_ENGINES

__all__ = [
    "DEFAULT_MILVUS_IMAGE",
    "ENGINE_HELP",
    "EngineAddress",
    "engine_label",
    "parse_engine_address",
    "validate_image",
]

# A real 2.5 release: BM25 full-text search and hybrid search exist since 2.5.0. Pinned because the
# testcontainers default (``latest``) would change what the kit measures without anyone noticing.
DEFAULT_MILVUS_IMAGE = "milvusdb/milvus:v2.5.16"

BackendKind = Literal["lite", "local", "uri", "container"]

VALID_FORMS = (
    "lite",
    "lite:<data dir>",
    *LOCAL_ENGINES,
    "uri (reads MILVUS_URI, MILVUS_TOKEN, MILVUS_DB)",
    "uri:<uri>",
    "container",
    "container:<image>:<tag>",
)
ENGINE_HELP = (
    "lite (Milvus Lite 3.x of this venv) | lite:<data dir> | "
    + " | ".join(LOCAL_ENGINES)
    + " (installed once into the engine cache, run on loopback) | uri:<uri> | uri (MILVUS_URI, "
    "MILVUS_TOKEN, MILVUS_DB) | container[:<image>:<tag>] (Docker, testcontainers; default "
    f"{DEFAULT_MILVUS_IMAGE}, or the image `rag-conformance build-image` makes)"
)
"""Every engine name the kit takes, in one line: each command's and the pytest option's help."""


@dataclass(frozen=True, slots=True)
class EngineAddress:
    """Which backend to use and its one argument (data dir, local engine name, URI or image); ``None``
    means the default. A ``local`` engine's target is its name (``lite-2.5.1``, ``milvus-2.3.5``)."""

    kind: BackendKind
    target: str | None = None

    def __str__(self) -> str:  # printed in messages: never with credentials
        if self.kind == "local" and self.target is not None:
            return self.target
        return self.kind if self.target is None else f"{self.kind}:{redact_uri(self.target)}"


def engine_label(engine: str) -> str:
    """An engine name as printed: a ``uri:`` engine with any credentials in it redacted."""
    return "uri:" + redact_uri(engine[4:]) if engine.startswith("uri:") else engine


def _invalid(address: object, why: str) -> EngineError:
    forms = ", ".join(VALID_FORMS)
    return EngineError(f"invalid Milvus engine address {address!r}: {why}; valid forms are: {forms}")


def validate_image(image: str) -> str:
    """Return ``image`` if it names a pinned tag or digest; raise :class:`EngineError` otherwise."""
    if "@" in image:  # a digest pins the image exactly
        return image
    # The tag is after the last ':' that follows the last '/'; a ':' before a '/' is a registry port.
    name, sep, tag = image.rpartition(":")
    if not sep or "/" in tag or not name:
        raise EngineError(
            f"container image {image!r} has no tag: pin a release such as {DEFAULT_MILVUS_IMAGE!r} "
            "so every run measures the same Milvus"
        )
    if tag == "latest":
        raise EngineError(
            f"container image {image!r} uses the moving tag 'latest': pin a release such as "
            f"{DEFAULT_MILVUS_IMAGE!r} so every run measures the same Milvus"
        )
    return image


def parse_engine_address(address: str | EngineAddress) -> EngineAddress:
    """Parse ``lite``, ``lite:<dir>``, a local engine's name (``lite-2.5.1``, ``milvus-2.3.5``), ``uri``,
    ``uri:<uri>``, ``container`` or ``container:<image>``.

    Raises :class:`EngineError` listing the valid forms when ``address`` matches none of them.
    """
    if isinstance(address, EngineAddress):
        return address
    if not isinstance(address, str):
        raise _invalid(address, f"expected a string, got {type(address).__name__}")
    text = address.strip()
    if text in LOCAL_ENGINES:
        return EngineAddress("local", text)
    kind, sep, target = text.partition(":")
    if kind == "uri" and sep:
        register_uri_secrets(target)  # hidden in every output from now on, whatever form they took
    shown = f"uri:{redact_uri(target)}" if kind == "uri" and sep else address  # never echo credentials
    if kind not in ("lite", "uri", "container"):
        raise _invalid(shown, f"unknown backend {kind!r}")
    if sep and not target.strip():
        raise _invalid(shown, f"nothing after '{kind}:'")
    value = target.strip() if sep else None
    if kind == "uri" and value is not None and "://" not in value:
        raise _invalid(shown, "the URI needs a scheme, e.g. uri:http://127.0.0.1:19530")
    if kind == "container" and value is not None:
        validate_image(value)
    return EngineAddress(kind, value)  # type: ignore[arg-type]  # kind checked above

"""Milvus engines for the kit: a local milvus-lite server, an existing URI, or a pinned container."""

from .._errors import EngineError
from ._base import DockerUnavailableError, Engine, EngineUnavailableError
from ._spec import DEFAULT_MILVUS_IMAGE, BackendSpec, parse_backend
from ._start import start_engine

__all__ = [
    "DEFAULT_MILVUS_IMAGE",
    "BackendSpec",
    "DockerUnavailableError",
    "Engine",
    "EngineError",
    "EngineUnavailableError",
    "parse_backend",
    "start_engine",
]

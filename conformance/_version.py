"""The kit's own version, as installed."""

from __future__ import annotations

from importlib.metadata import PackageNotFoundError, version

__all__ = ["kit_version"]


def kit_version() -> str:
    """The installed ``rag-quality-conformance`` version, or ``unknown`` when run from a bare tree."""
    try:
        return version("rag-quality-conformance")
    except PackageNotFoundError:
        return "unknown"

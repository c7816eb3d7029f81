"""Where the feature files and the pinned spec are, installed or checked out."""

from __future__ import annotations

from pathlib import Path

__all__ = ["SPEC_FILENAME", "features_dir", "spec_path"]

SPEC_FILENAME = "rag-retrieval-quality-score.md"
_PACKAGE = Path(__file__).resolve().parents[1]  # the conformance package


def features_dir() -> Path:
    """The feature files: ``conformance/_features`` in the wheel, else the checkout's ``features/``."""
    installed = _PACKAGE / "_features"
    if installed.is_dir():
        return installed
    return _PACKAGE.parent / "features"


def spec_path() -> Path:
    """The pinned spec text, the normative input of the kit."""
    return features_dir() / "spec" / SPEC_FILENAME

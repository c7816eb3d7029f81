"""Where the bundled labelled set is: ``evaluation/data/``, in both formats (``README.md`` there)."""

from __future__ import annotations

from importlib import resources
from pathlib import Path

__all__ = ["BUNDLED_NAME", "bundled_beir_path", "bundled_data_dir", "bundled_jsonl_paths"]

BUNDLED_NAME = "bundled set"


def bundled_data_dir() -> Path:
    """The folder of the bundled set, inside the installed package."""
    return Path(str(resources.files("evaluation") / "data"))


def bundled_jsonl_paths() -> tuple[Path, Path]:
    """The bundled set in the JSON Lines format: (corpus.jsonl, queries.jsonl)."""
    base = bundled_data_dir()
    return base / "corpus.jsonl", base / "queries.jsonl"


def bundled_beir_path() -> Path:
    """The bundled set in the BEIR layout (split ``test``)."""
    return bundled_data_dir() / "beir"

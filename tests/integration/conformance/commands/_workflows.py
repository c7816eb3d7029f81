"""The GitHub Actions recipes in examples/github-actions, read as their tests read them."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml  # type: ignore[import-untyped]  # no stubs installed; only safe_load is used

RECIPES = Path(__file__).resolve().parents[4] / "examples" / "github-actions"


def load_workflow(name: str) -> dict[str, Any]:
    """The recipe ``name`` (``conformance.yml``, ``upgrade.yml``) as YAML data; it must be a mapping."""
    data = yaml.safe_load((RECIPES / name).read_text(encoding="utf-8"))
    assert isinstance(data, dict), f"{name} is not a YAML mapping"
    return data

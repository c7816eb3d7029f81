"""docs/architecture.md names only what exists, and names every folder of the judge's layers."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PAGE = (ROOT / "docs" / "architecture.md").read_text(encoding="utf-8")


def test_every_path_the_page_names_exists() -> None:
    named = set(re.findall(r"`((?:conformance|reference|tests|features|docs)/[^`\s]*)`", PAGE))
    assert named
    missing = sorted(p for p in named if not (ROOT / p).exists())
    assert not missing, f"docs/architecture.md names what the repository does not have: {missing}"


def test_every_layer_of_the_contract_is_on_the_page() -> None:
    config = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["importlinter"]
    layers = next(c for c in config["contracts"] if c["name"] == "The judge's layers, top to bottom")[
        "layers"
    ]
    for layer in layers:
        for module in re.split(r"\s*[|:]\s*", layer):
            path = module.replace(".", "/")
            assert f"`{path}/`" in PAGE or f"`{path}.py`" in PAGE, f"{module} is not on the page"

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


def test_every_package_docstring_is_a_map_of_its_modules() -> None:
    """Each package's ``__init__`` names every module and subpackage it holds (issue: "a map")."""
    import ast

    unnamed = {}
    for init in [*ROOT.glob("conformance/**/__init__.py"), *ROOT.glob("reference/**/__init__.py")]:
        doc = ast.get_docstring(ast.parse(init.read_text(encoding="utf-8"))) or ""
        package = init.parent
        modules = [m.stem for m in package.glob("*.py") if m.name != "__init__.py"]
        modules += [d.name for d in package.iterdir() if (d / "__init__.py").is_file()]
        missing = sorted(m for m in modules if m not in doc)
        if missing:
            unnamed[str(init.relative_to(ROOT))] = missing
    assert unnamed == {}, f"package docstrings that do not name these modules: {unnamed}"

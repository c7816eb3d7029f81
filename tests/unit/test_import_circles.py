"""No circle of imports inside a package: not two modules importing each other, not a longer ring, not
lazily in a function, not for typing.

A circle is one design in several files (issue 34 found three pairs: the retry taking the whole Judge,
the codec reaching back into the stdio adapter, the report and its scope; issue 52 a ring in the labelled
sets, hidden behind an import inside a method). grimp reads every import statement, wherever it sits,
so a lazy import or one under ``TYPE_CHECKING`` counts too; graphlib finds a ring of any length.
"""

from __future__ import annotations

import sys
from graphlib import CycleError, TopologicalSorter
from pathlib import Path

import grimp
import pytest


def _circle(package: str) -> list[str] | None:
    """One import circle among the package's modules (first module repeated at the end), or None."""
    graph = grimp.build_graph(package, exclude_type_checking_imports=False)
    imports = {
        module: graph.find_modules_directly_imported_by(module) & graph.modules for module in graph.modules
    }
    try:
        TopologicalSorter(imports).prepare()
    except CycleError as error:
        return list(reversed(error.args[1]))
    return None


@pytest.mark.parametrize("package", ["conformance", "reference", "evaluation", "benchmarks"])
def test_no_import_circles(package: str) -> None:
    assert _circle(package) is None, f"an import circle in {package}: {' -> '.join(_circle(package) or [])}"


def test_a_ring_of_three_behind_a_lazy_import_is_found(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    ring = tmp_path / "ringpkg"
    ring.mkdir()
    (ring / "__init__.py").write_text("")
    (ring / "values.py").write_text("def cut():\n    from .validate import check\n    return check\n")
    (ring / "validate.py").write_text("from .warnings import warn\n\ndef check():\n    return warn\n")
    (ring / "warnings.py").write_text("from .values import cut\n\ndef warn():\n    return cut\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.delitem(sys.modules, "ringpkg", raising=False)
    circle = _circle("ringpkg")
    assert circle is not None
    assert set(circle) == {"ringpkg.values", "ringpkg.validate", "ringpkg.warnings"}

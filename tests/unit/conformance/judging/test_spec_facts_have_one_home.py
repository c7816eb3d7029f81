"""Every spec fact the judge uses is written once, in the spec model, and imported where it is needed.

Two copies of the spec's formula or its label table are exactly the drift a conformance kit exists to
catch (issue 34): these look through the whole judge for a second copy.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[4]
KIT = ROOT / "conformance"
SPEC_MODEL = KIT / "judging" / "_spec_model"
SPELLINGS = {"dense", "hybrid", "l2_distance", "rrf_fused", "bm25_only_no_dense"}


def _sources() -> dict[Path, str]:
    return {path: path.read_text(encoding="utf-8") for path in sorted(KIT.rglob("*.py"))}


def _where(pattern: str) -> list[str]:
    return [str(p.relative_to(ROOT)) for p, text in _sources().items() if re.search(pattern, text, re.M)]


def _one_minus_min(tree: ast.AST) -> bool:
    """Whether the code computes ``1 - min(...)``: the dense formula, however its names are spelled."""
    return any(
        isinstance(node, ast.BinOp)
        and isinstance(node.op, ast.Sub)
        and isinstance(node.left, ast.Constant)
        and node.left.value == 1
        and any(
            isinstance(n, ast.Call) and getattr(n.func, "id", None) == "min" for n in ast.walk(node.right)
        )
        for node in ast.walk(tree)
    )


def test_the_dense_formula_is_written_once() -> None:
    written = [str(p.relative_to(ROOT)) for p, text in _sources().items() if _one_minus_min(ast.parse(text))]
    assert written == ["conformance/judging/_spec_model/_numbers.py"]
    assert _where(r"^\s*def dense_quality\(") == ["conformance/judging/_spec_model/_numbers.py"]


def test_the_tolerances_are_written_once() -> None:
    assert _where(r"^\s*_?[A-Z_]*TOLERANCE\s*(:[^=\n]*)?=\s*[\d.]") == [
        "conformance/judging/_spec_model/_numbers.py"
    ]


def _label_tables(tree: ast.AST) -> list[int]:
    """Lines of dict, tuple, list or set literals that spell two or more of the spec's labels."""
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Dict):
            items = [*node.keys, *node.values]
        elif isinstance(node, ast.Tuple | ast.List | ast.Set):
            items = list(node.elts)
        else:
            continue
        spelled = {i.value for i in items if isinstance(i, ast.Constant) and i.value in SPELLINGS}
        if len(spelled - {"dense", "hybrid"}) >= 1 and len(spelled) >= 2:
            found.append(node.lineno)
    return found


def test_the_label_table_is_written_once() -> None:
    tables = {
        str(path.relative_to(ROOT)): lines
        for path, text in _sources().items()
        if (lines := _label_tables(ast.parse(text)))
    }
    assert list(tables) == ["conformance/judging/_spec_model/_labels.py"], tables


def test_dense_only_is_judged_in_one_place() -> None:
    assert _where(r"^\s*def (check_dense_only|non_dense\w*)\(") == [
        "conformance/judging/_spec_model/_dense_only.py"
    ]

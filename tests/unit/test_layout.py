"""The test tree keeps its two tiers (tests/README.md): every test module is under tests/unit or
tests/integration, in a package (test module names repeat across folders)."""

from __future__ import annotations

from pathlib import Path

TESTS = Path(__file__).resolve().parents[1]
TIERS = ("unit", "integration")


def _test_modules() -> list[Path]:
    return sorted(p for p in TESTS.rglob("test_*.py") if "__pycache__" not in p.parts)


def test_every_test_module_is_in_a_tier() -> None:
    outside = [
        str(p.relative_to(TESTS)) for p in _test_modules() if p.relative_to(TESTS).parts[0] not in TIERS
    ]
    assert not outside, (
        f"test modules outside tests/unit and tests/integration: {outside}; move each to "
        "tests/unit/<source path>/ when it starts nothing, else tests/integration/<source path>/"
    )


def test_every_tier_folder_is_a_package() -> None:
    missing = [
        str(folder.relative_to(TESTS))
        for tier in TIERS
        for folder in [TESTS / tier, *(TESTS / tier).rglob("*")]
        if folder.is_dir() and folder.name != "__pycache__" and not (folder / "__init__.py").is_file()
    ]
    assert not missing, f"folders without __init__.py (add an empty one): {missing}"


def test_the_tiers_hold_tests() -> None:
    counts = {
        tier: sum(1 for p in _test_modules() if p.relative_to(TESTS).parts[0] == tier) for tier in TIERS
    }
    assert all(counts.values()), counts

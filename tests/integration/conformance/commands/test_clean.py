"""``rag-conformance clean``: the kit's own leftovers on a lasting engine, listed, then dropped with --yes;
nothing else on the engine is touched, and a run on that engine says they are there."""

from __future__ import annotations

import json
from pathlib import Path

from conformance.engines import start_engine
from conformance.engines._sweep import kit_leftovers

from .test_cli_exit_codes import rag_conformance

LEFT = ("rqs_deadbeef_kit_oracle", "rqs_deadbeef_reference_scenarios", "rqs_0011aabb_kit_oracle")
THEIRS = ("orders", "rqs_", "rqs_with_underscore_", "rqsx_deadbeef_a", "rqs_DEADBEEF_a", "rqs_deadbeef_")


def _names(data: Path) -> set[str]:
    with start_engine(f"lite:{data}") as engine:
        return set(engine.client().list_collections())


def test_only_the_kits_pattern_counts_as_its_own() -> None:
    runs = kit_leftovers([*LEFT, *THEIRS, "rqs_0badc0de_x"], except_prefix="rqs_0badc0de_")
    assert runs == {
        "rqs_0011aabb_": ["rqs_0011aabb_kit_oracle"],
        "rqs_deadbeef_": ["rqs_deadbeef_kit_oracle", "rqs_deadbeef_reference_scenarios"],
    }


def test_clean_lists_then_drops_the_kits_leftovers_only(tmp_path: Path) -> None:
    data = tmp_path / "milvus"
    with start_engine(f"lite:{data}") as engine:
        client = engine.client()
        for name in (*LEFT, *THEIRS):
            client.create_collection(name, dimension=2)
    listed, _ = rag_conformance("clean", "--milvus", f"lite:{data}", cwd=tmp_path)
    assert listed.returncode == 0, listed.stderr
    assert "3 collections of 2 other kit runs (rqs_0011aabb_, rqs_deadbeef_)" in listed.stdout
    assert "nothing dropped" in listed.stdout
    assert not any(f"  {name}\n" in listed.stdout for name in THEIRS)
    assert _names(data) >= set(LEFT)

    # A run on that engine judges as usual and says what it found.
    ran, _ = rag_conformance(
        "run", "--milvus", f"lite:{data}", "-k", "labels", "--report", "out", cwd=tmp_path
    )
    assert ran.returncode == 0, ran.stdout + ran.stderr
    warnings = json.loads((tmp_path / "out" / "report.json").read_text())["warnings"]
    assert any("rag-conformance clean --milvus lite:" in w and "3 collections" in w for w in warnings), (
        warnings
    )

    one, _ = rag_conformance(
        "clean", "--milvus", f"lite:{data}", "--prefix", "rqs_0011aabb_", "--yes", cwd=tmp_path
    )
    assert one.returncode == 0, one.stderr
    assert "dropped 1 collection" in one.stdout
    dropped, _ = rag_conformance("clean", "--milvus", f"lite:{data}", "--yes", cwd=tmp_path)
    assert "dropped 2 collections" in dropped.stdout
    assert _names(data) == set(THEIRS)

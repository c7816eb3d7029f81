"""docs/engine-behaviour.md is generated from the committed runs, never edited by hand, and covers every
engine scenario on every engine line that was run."""

from __future__ import annotations

import importlib.util
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]


def _table():
    spec = importlib.util.spec_from_file_location(
        "engine_behaviour_table", ROOT / "docs" / "engine_behaviour_table.py"
    )
    module = importlib.util.module_from_spec(spec)
    assert spec.loader is not None
    spec.loader.exec_module(module)
    return module


def test_the_page_is_what_the_runs_give() -> None:
    table = _table()
    page = (ROOT / "docs" / "engine-behaviour.md").read_text(encoding="utf-8")
    assert page == table.render(table.load_runs()), "run `python docs/engine_behaviour_table.py --write`"


def test_every_engine_scenario_has_a_row_and_every_run_a_column() -> None:
    table = _table()
    runs = table.load_runs()
    page = (ROOT / "docs" / "engine-behaviour.md").read_text(encoding="utf-8")
    scenarios = set(table._scenario_files())
    for line, run in runs.items():
        assert {s["id"] for s in run["scenarios"]} == scenarios, (
            f"{line}'s run is older than the features: run it again"
        )
        assert f"[{line}](engine-behaviour/runs/{line}.json)" in page
    assert {"lite", "lite-2.5.1", "milvus-2.3.5"} <= set(runs)


def test_a_fact_becomes_a_row_and_a_missing_one_a_dash() -> None:
    table = _table()
    scenario = {
        "id": "engine-x",
        "name": "X",
        "status": "passed",
        "message": "",
        "facts": ["offset: ignored"],
    }
    runs = {
        "lite-2.5.1": {"version": "v1", "scenarios": [scenario]},
        "milvus-2.3.5": {
            "version": "v2",
            "scenarios": [{**scenario, "status": "not_applicable", "facts": []}],
        },
    }
    page = table.render(runs)
    assert "| X | as documented | n/a |" in page
    assert "| offset | ignored | - |" in page

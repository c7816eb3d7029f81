"""docs/writing-an-adapter.md cannot rot: its code runs through the kit as the page says, its table is
derived from the features, and it uses public names only."""

from __future__ import annotations

import ast
import importlib.util
import json
import os
import re
import shlex
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import pytest

import conformance
from conformance import (
    Block,
    Corpus,
    CorpusChunk,
    Dropped,
    Hints,
    Hit,
    ImplementationInfo,
    LookupReply,
    LookupRequest,
    MilvusEndpoint,
    PostProcessConfig,
    PostProcessReply,
    PostProcessRequest,
    QualityRequest,
    SearchReply,
    SearchRequest,
    WireCandidate,
)

ROOT = Path(__file__).resolve().parents[3]
GUIDE = ROOT / "docs" / "writing-an-adapter.md"
TEXT = GUIDE.read_text(encoding="utf-8")
# A fenced block whose info string names a file: ```python pocketrank.py
FILE_BLOCK = re.compile(r"^```python (\S+)\n(.*?)^```$", re.MULTILINE | re.DOTALL)
CONSOLE_BLOCK = re.compile(r"^```console\n(.*?)^```$", re.MULTILINE | re.DOTALL)
FILES = dict(FILE_BLOCK.findall(TEXT))
COMMANDS = [line for block in CONSOLE_BLOCK.findall(TEXT) for line in block.splitlines() if line.strip()]


def _script() -> ModuleType:
    spec = importlib.util.spec_from_file_location(
        "scenarios_by_capability", ROOT / "docs" / "scenarios_by_capability.py"
    )
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_guide_has_the_library_two_adapters_and_a_dense_only_one() -> None:
    assert set(FILES) == {
        "pocketrank.py",
        "pocketrank_adapter.py",
        "pocketrank_stdio.py",
        "pocketrank_dense.py",
    }
    assert len(FILES["pocketrank_adapter.py"].splitlines()) < 60  # a complete adapter, under 60 lines


def test_the_capability_table_is_the_one_the_features_give() -> None:
    script = _script()
    assert script.guide_table(TEXT) == script.render(), (
        "the features changed: run `python docs/scenarios_by_capability.py --write`"
    )


def test_the_table_lists_every_scenario_that_needs_a_capability() -> None:
    listed = set(re.findall(r"`([a-z0-9-]+)`", _script().guide_table(TEXT)))
    features = ROOT / "features"
    ids = {
        tag.removeprefix("@id:")
        for path in features.glob("*.feature")  # engine checks live in features/engine/
        for tag in path.read_text().split()
        if tag.startswith("@id:")
    }
    assert ids
    assert ids <= listed


def test_the_guides_code_uses_public_names_only() -> None:
    public = set(conformance.__all__)
    for name, code in FILES.items():
        for node in ast.walk(ast.parse(code, filename=name)):
            if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("conformance"):
                assert node.module == "conformance", f"{name} imports {node.module}"
                assert {a.name for a in node.names} <= public, f"{name}: {[a.name for a in node.names]}"
            if isinstance(node, ast.Import):
                assert all(not a.name.startswith("conformance.") for a in node.names), name
            if isinstance(node, ast.Attribute) and getattr(node.value, "id", None) == "conformance":
                assert node.attr in public, f"{name} uses conformance.{node.attr}"
    for used in re.findall(r"conformance\.([A-Za-z_]+)", TEXT):
        assert used in public or used in ("stdio",), f"the guide names conformance.{used}"


@pytest.mark.parametrize(
    "model",
    [
        QualityRequest,
        PostProcessRequest,
        WireCandidate,
        Hints,
        PostProcessConfig,
        PostProcessReply,
        Block,
        Dropped,
        MilvusEndpoint,
        Corpus,
        CorpusChunk,
        SearchRequest,
        SearchReply,
        Hit,
        LookupRequest,
        LookupReply,
        ImplementationInfo,
    ],
    ids=lambda m: m.__name__,
)
def test_every_wire_field_is_explained(model: type) -> None:
    wire = TEXT[TEXT.index("## What each wire field means") :]
    for name, field in model.model_fields.items():
        assert f"`{field.alias or name}`" in wire, f"{model.__name__}.{field.alias or name}"


def _cli_env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("PYTEST_ADDOPTS", "PYTEST_PLUGINS")}
    # The page's commands as a user types them: `rag-conformance` and `python` from this venv.
    env["PATH"] = os.pathsep.join([str(Path(sys.executable).parent), env.get("PATH", "")])
    return env


@pytest.mark.parametrize("command", [c for c in COMMANDS if c.startswith("rag-conformance ")])
def test_each_command_of_the_guide_works_on_its_code(tmp_path: Path, command: str) -> None:
    for name, code in FILES.items():
        (tmp_path / name).write_text(code)
    done = subprocess.run(
        shlex.split(command), cwd=tmp_path, env=_cli_env(), capture_output=True, text=True, timeout=900
    )
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-4000:]
    if " smoke " in f" {command} ":
        assert "FAIL" not in done.stdout
        return
    report = json.loads((tmp_path / "rqs-report" / "report.json").read_text())
    assert report["verdict"] == "CONFORMS"
    statuses = {s["status"] for s in report["scenarios"]}
    assert statuses <= {"passed", "not_applicable"}, [
        s for s in report["scenarios"] if s["status"] not in statuses
    ]
    for scenario in report["scenarios"]:
        if scenario["status"] == "not_applicable":
            assert scenario["message"], scenario  # every NOT APPLICABLE says why
    if "pocketrank_dense" in command:
        # Declared search for dense mode only: its dense scenarios are judged, and nothing else runs.
        passed = {s["id"] for s in report["scenarios"] if s["status"] == "passed"}
        dense_only = {
            i
            for declared, ids in _script().rows()
            if "`search:dense`" in declared.split(" or ")
            and all(part.startswith("`search:") for part in declared.split(" or "))
            for i in ids
        }
        assert dense_only, "the features must have scenarios that search in dense mode"
        assert passed == dense_only
        hybrid = [s for s in report["scenarios"] if "for mode 'hybrid'" in (s["message"] or "")]
        assert hybrid, "a hybrid search scenario must say it is NOT APPLICABLE for mode 'hybrid'"

"""``rag-conformance upgrade --in-place`` on the Lite lines, as a team runs it: the command line, on
the bundled set's corpus with three queries (each run starts two engines, about 10 s).

What Milvus Lite does when the next version opens the data the last one wrote, measured here:
- 2.4.12 -> 2.5.1: it opens, and every (dense) answer is unchanged; the reference asks neither for
  nullable fields (2.4.12 keeps the flag, then its server exits on a search; 2.5.1 cannot load such a
  collection: CANNOT OPEN, the fields named, tests/unit/conformance/upgrade/test_in_place_values.py)
  nor, there, for BM25;
- 2.5.1 -> 3.x: 3.x keeps a directory where 2.x kept a file and cannot start on it (CANNOT OPEN);
- 3.1.1 -> 3.x of this venv: it opens, and every query's answer is unchanged.
The server lines (Milvus 2.2.16 -> 2.3.5, one data directory) are in
tests/integration/conformance/engines/test_other_engines.py, the one module where a Milvus 2.x server may
run (its etcd always binds the same port).
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from conformance.engines import EngineUnavailableError, _lite, start_engine
from conformance.engines._lines import LOCAL_ENGINES
from conformance.engines._local import ensure_venv
from conformance.engines._ports import free_port
from conformance.upgrade import _in_place


def _installed(*names: str) -> None:
    for name in names:
        try:
            ensure_venv(LOCAL_ENGINES[name])
        except EngineUnavailableError as exc:
            pytest.skip(f"engine {name} cannot be installed here: {exc}")


def _upgrade(old: str, new: str, out: Path) -> tuple[subprocess.CompletedProcess[str], dict]:
    command = [sys.executable, "-m", "conformance.commands._cli", "upgrade", "--from", old, "--to", new]
    command += ["--in-place-only", "--limit", "3", "--out", str(out), "--no-progress"]
    result = subprocess.run(command, capture_output=True, text=True, timeout=600, check=False)
    written = out / "in-place.json"
    assert written.is_file(), result.stdout[-3000:] + result.stderr[-3000:]
    return result, json.loads(written.read_text())


def test_lite_2_4_12_to_2_5_1_in_place_opens_with_every_answer_unchanged(tmp_path: Path) -> None:
    """Lite 2.4.12 has no BM25: the reference stores dense only there, and no nullable field (2.5.1 has
    none, and 2.4.12's own server exits on a search of one), so the next version opens the same file."""
    _installed("lite-2.4.12", "lite-2.5.1")
    result, found = _upgrade("lite-2.4.12", "lite-2.5.1", tmp_path)
    assert result.returncode == 0, result.stdout + result.stderr[-3000:]
    last = result.stdout.strip().splitlines()[-1]
    assert last.startswith("verdict in place: UNCHANGED (old lite-2.4.12 -> new lite-2.5.1)")
    assert "every query's answer unchanged" in last
    assert found["verdict"] == "UNCHANGED"
    assert found["before"][0]["rows"] > 0
    assert found["after"] == found["before"]
    assert found["modes"] == ["dense"]
    assert found["changes"] == []


def test_lite_2_5_1_to_3_in_place_cannot_open_says_what_to_do(tmp_path: Path) -> None:
    _installed("lite-2.5.1")
    result, found = _upgrade("lite-2.5.1", "lite", tmp_path)
    assert result.returncode == 1, result.stdout + result.stderr[-3000:]
    assert result.stdout.strip().splitlines()[-1].startswith("verdict in place: CANNOT OPEN")
    assert found["verdict"] == "CANNOT OPEN"
    assert "lite.db" in found["engine_words"]  # the engine's own words name the file it cannot use
    assert "ingest your source data again" in found["advice"]
    assert "one file" in found["advice"]


def test_lite_3_1_1_to_this_venvs_lite_opens_with_every_answer_unchanged(tmp_path: Path) -> None:
    _installed("lite-3.1.1")
    result, found = _upgrade("lite-3.1.1", "lite", tmp_path)
    assert result.returncode == 0, result.stdout + result.stderr[-3000:]
    assert "every query's answer unchanged" in result.stdout.strip().splitlines()[-1]
    assert found["verdict"] == "UNCHANGED"
    assert found["queries"] == 3
    assert found["modes"] == ["dense", "hybrid"]
    assert found["after"] == found["before"]
    assert found["changes"] == []
    assert found["missing"] == []


def test_an_old_engine_that_loses_its_port_to_another_engine_starts_on_another(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The old engine's start picks its port (and recovers from losing the first it found free); the new
    # engine then takes that port over.
    with start_engine("lite") as other:
        taken = int(other.endpoint.uri.rsplit(":", 1)[1])
        answers = iter([taken])
        monkeypatch.setattr(_lite, "free_port", lambda: next(answers, None) or free_port())
        engine, port = _in_place._start_old("lite", tmp_path, "0badc0de")
        try:
            assert port != taken
            assert engine.endpoint.uri.endswith(f":{port}")
            assert engine.client().list_collections() == []
        finally:
            engine.close()

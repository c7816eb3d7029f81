"""The Node.js example must conform: every applicable scenario passes, judged over stdio.

Needs ``node`` and ``npm``; without them the test is skipped, saying so. ``npm ci`` installs the
example's locked dependencies when ``node_modules`` is missing (it needs the npm registry once).
"""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest

from conformance.commands._runner import run_conformance

EXAMPLE = Path(__file__).resolve().parents[3] / "examples" / "node"


def _node_ready() -> str | None:
    """None when the example can run, else why it cannot."""
    node, npm = shutil.which("node"), shutil.which("npm")
    if node is None or npm is None:
        return "node and npm are not on PATH: install Node.js 18+ to judge the Node example"
    if not (EXAMPLE / "node_modules" / "@zilliz" / "milvus2-sdk-node").is_dir():
        done = subprocess.run(
            [npm, "ci", "--no-audit", "--no-fund"], cwd=EXAMPLE, capture_output=True, text=True, timeout=600
        )
        if done.returncode != 0:
            return f"npm ci failed in {EXAMPLE} (no registry access?): {done.stderr.strip()[-500:]}"
    return None


def test_the_node_example_conforms(tmp_path: Path) -> None:
    reason = _node_ready()
    if reason is not None:
        pytest.skip(reason)
    outcome = run_conformance(
        f"cmd:node {EXAMPLE / 'impl.js'}",
        report_dir=tmp_path,
        validate=True,
        # Engine checks judge Milvus, not the implementation; they have their own tests.
        pytest_args=["-m", "not rqs_engine_check"],
    )
    report = json.loads((tmp_path / "report.json").read_text())
    not_passed = [
        f"{s['id']}: {s['status']}: {s['message']}" for s in report["scenarios"] if s["status"] != "passed"
    ]
    assert not not_passed, not_passed
    assert report["summary"]["passed"] >= 20
    assert outcome.exit_code == 0

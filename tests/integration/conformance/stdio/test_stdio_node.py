"""The Node.js example must conform on both Node SDK lines docs/engines.md names: every applicable
scenario passes, judged over stdio, with ``@zilliz/milvus2-sdk-node`` 2.6.x (``examples/node``'s lock)
and 3.0.x (``examples/node/sdk-3.0``'s lock; the same ``impl.js``, copied beside that SDK).

Needs ``node`` and ``npm``; without them the test is skipped, saying so. ``npm ci`` installs each
line's locked dependencies when its ``node_modules`` is missing (it needs the npm registry once).
"""

from __future__ import annotations

import fcntl
import hashlib
import json
import re
import shutil
import subprocess
import tempfile
from pathlib import Path

import pytest

from conformance.commands._runner import run_conformance

EXAMPLE = Path(__file__).resolve().parents[4] / "examples" / "node"
SDK_LINES = {"2.6": EXAMPLE, "3.0": EXAMPLE / "sdk-3.0"}  # the SDK line -> the folder locking it


def _npm_ready(folder: Path) -> str | None:
    """None when ``folder``'s locked SDK is installed (installing it if need be), else why it is not."""
    node, npm = shutil.which("node"), shutil.which("npm")
    if node is None or npm is None:
        return "node and npm are not on PATH: install Node.js 18+ to judge the Node example"
    # One npm ci per folder at a time: pytest-xdist runs this module's tests on several workers.
    lock = (
        Path(tempfile.gettempdir()) / f"rqs-npm-{hashlib.sha256(str(folder).encode()).hexdigest()[:12]}.lock"
    )
    with lock.open("w") as held:
        fcntl.flock(held, fcntl.LOCK_EX)
        if _locked_sdk(folder) != _present_sdk(folder):  # missing, or a checkout's older install
            done = subprocess.run(
                [npm, "ci", "--no-audit", "--no-fund"],
                cwd=folder,
                capture_output=True,
                text=True,
                timeout=600,
            )
            if done.returncode != 0:
                return f"npm ci failed in {folder} (no registry access?): {done.stderr.strip()[-500:]}"
    return None


def _locked_sdk(folder: Path) -> str | None:
    lock = json.loads((folder / "package-lock.json").read_text())
    return lock.get("packages", {}).get("node_modules/@zilliz/milvus2-sdk-node", {}).get("version")


def _present_sdk(folder: Path) -> str | None:
    installed = folder / "node_modules" / "@zilliz" / "milvus2-sdk-node" / "package.json"
    return json.loads(installed.read_text()).get("version") if installed.is_file() else None


def _installed_sdk(script_dir: Path) -> str:
    probe = "console.log(require('@zilliz/milvus2-sdk-node/package.json').version)"
    node = shutil.which("node") or "node"
    return subprocess.run(
        [node, "-e", probe], cwd=script_dir, capture_output=True, text=True, check=True, timeout=60
    ).stdout.strip()


@pytest.mark.parametrize("line", sorted(SDK_LINES))
def test_the_node_example_conforms_on_each_sdk_line(line: str, tmp_path: Path) -> None:
    folder = SDK_LINES[line]
    reason = _npm_ready(folder)
    if reason is not None:
        pytest.skip(reason)
    script = EXAMPLE / "impl.js"
    if folder != EXAMPLE:  # impl.js beside the other line's SDK: Node resolves require() from the script
        here = tmp_path / "node-example"
        here.mkdir()
        shutil.copy(script, here / "impl.js")
        (here / "node_modules").symlink_to(folder / "node_modules", target_is_directory=True)
        script = here / "impl.js"
    locked = json.loads((folder / "package.json").read_text())["dependencies"]["@zilliz/milvus2-sdk-node"]
    assert locked.startswith(f"{line}.")
    assert _installed_sdk(script.parent) == locked  # the run below is on the line it says
    outcome = run_conformance(
        f"cmd:node {script}",
        report_dir=tmp_path / "out",
        validate=True,
        # Engine checks judge Milvus, not the implementation; they have their own tests.
        pytest_args=["-m", "not rqs_engine_check"],
    )
    report = json.loads((tmp_path / "out" / "report.json").read_text())
    not_passed = [
        f"{s['id']}: {s['status']}: {s['message']}" for s in report["scenarios"] if s["status"] != "passed"
    ]
    assert not not_passed, not_passed
    assert report["summary"]["passed"] >= 20
    assert outcome.exit_code == 0
    # Every capability was asked, and the properties ran many examples, not one.
    asked = {capability for s in report["scenarios"] for capability in s["calls"]}
    assert {"labels", "quality", "post_process", "prepare", "search", "lookup"} <= asked


def test_a_run_names_the_blank_query_a_node_program_answers_an_error_to(tmp_path: Path) -> None:
    """The Node team's seed-dependent failure, made certain: every run asks a blank query early (the
    knowledge base's explicit searches hold every query shape). The message names that request and says
    the program answered an error; it never says crashed."""
    reason = _npm_ready(EXAMPLE)
    if reason is not None:
        pytest.skip(reason)
    original = (EXAMPLE / "impl.js").read_text()
    head = "async function search({ queryText, queryVector, mode, k, category = null, rrfK = 60 }) {\n"
    assert head in original
    here = tmp_path / "blank-refusing"
    here.mkdir()
    refusal = '  if (!queryText.trim()) throw new Error("Search data is required");\n'
    (here / "impl.js").write_text(original.replace(head, head + refusal))
    (here / "node_modules").symlink_to(EXAMPLE / "node_modules", target_is_directory=True)
    run_conformance(
        f"cmd:node {here / 'impl.js'}",
        report_dir=tmp_path / "out",
        select="prop-search-follows-its-mode-on-a-real-knowledge-base",
    )
    report = json.loads((tmp_path / "out" / "report.json").read_text())
    (scenario,) = report["scenarios"]
    assert scenario["status"] == "errored", scenario
    message = scenario["message"]
    assert "answered an error to search seq " in message, message
    # The blank query as repr shows it: '', ' ', '   ' or '\t\n' (the seed draws one).
    assert re.search(r"search seq \d+ \(mode (dense|hybrid), query '( |\\t|\\n)*'", message), message
    assert "Search data is required" in message
    assert "crash" not in message

"""The GitHub Actions recipe for ``upgrade`` (examples/github-actions/upgrade.yml), checked as far as it
can be here: valid YAML, the kit pinned, its ``rag-conformance`` line accepted by this kit's parser,
the report uploaded whatever happened, and its shell step run under Actions' bash against a stand-in
``rag-conformance`` for every exit code: 1 fails the job, 2 warns NOT JUDGED (fails only when asked).
"""

from __future__ import annotations

import os
import shlex
import shutil
import subprocess
from importlib.metadata import version
from pathlib import Path
from typing import Any

import pytest
import yaml  # type: ignore[import-untyped]  # no stubs installed; only safe_load is used

from conformance.commands._cli import build_parser
from tests.integration.conformance.commands._workflows import RECIPES, load_workflow

WORKFLOW = RECIPES / "upgrade.yml"


@pytest.fixture(scope="module")
def workflow() -> dict[str, Any]:
    return load_workflow("upgrade.yml")


@pytest.fixture(scope="module")
def steps(workflow: dict[str, Any]) -> list[dict[str, Any]]:
    return workflow["jobs"]["upgrade"]["steps"]


def _step(steps: list[dict[str, Any]], name: str) -> dict[str, Any]:
    return next(s for s in steps if s.get("name") == name)


def test_the_kit_is_pinned_and_the_report_is_uploaded_whatever_happened(
    workflow: dict[str, Any], steps: list[dict[str, Any]]
) -> None:
    assert workflow["env"]["KIT_VERSION"] == version("rag-quality-conformance")
    install = _step(steps, "Install the pinned kit and this implementation")["run"]
    assert '"rag-quality-conformance[plot]==${KIT_VERSION}"' in install
    names = [s.get("name") for s in steps]
    assert names.index("Upgrade check") < names.index("Upload the upgrade report")
    upload = _step(steps, "Upload the upgrade report")
    assert upload["if"] == "always()"
    assert upload["with"]["path"] == "rqs-upgrade/"


def test_its_upgrade_line_parses(steps: list[dict[str, Any]]) -> None:
    script = _step(steps, "Upgrade check")["run"]
    [line] = [ln.strip() for ln in script.splitlines() if ln.strip().startswith("rag-conformance ")]
    words = shlex.split(line.replace('"$FROM"', "lite-2.5.1").replace('"$TO"', "lite"))[1:]
    words = [w.replace("$ADAPTER", "my_rag.conformance:MyImplementation") for w in words]
    args = build_parser().parse_args(words)
    assert (args.old, args.new, args.out) == ("lite-2.5.1", "lite", "rqs-upgrade")


@pytest.mark.parametrize(
    ("kit_exit", "fail_on_not_judged", "job_exit", "says"),
    [
        (0, "false", 0, "SAFE"),
        (1, "false", 1, "::error::REGRESSES"),
        (2, "false", 0, "::warning::NOT JUDGED"),
        (2, "true", 2, "::warning::NOT JUDGED"),
        (143, "false", 143, "::error::the check ended with exit code 143"),
    ],
)
def test_the_step_fails_on_a_regression_and_warns_when_not_judged(
    steps: list[dict[str, Any]],
    tmp_path: Path,
    kit_exit: int,
    fail_on_not_judged: str,
    job_exit: int,
    says: str,
) -> None:
    bash = shutil.which("bash")
    if bash is None:
        pytest.skip("no bash here to run the step as Actions does")
    stand_in = tmp_path / "bin" / "rag-conformance"
    stand_in.parent.mkdir()
    stand_in.write_text(
        "#!/bin/sh\n"
        'mkdir -p rqs-upgrade && echo "# Upgrade check: $*" > rqs-upgrade/upgrade.md\n'
        f"exit {kit_exit}\n"
    )
    stand_in.chmod(0o755)
    script = tmp_path / "step.sh"
    script.write_text(_step(steps, "Upgrade check")["run"])
    summary = tmp_path / "summary.md"
    env = {
        **os.environ,
        "PATH": f"{stand_in.parent}{os.pathsep}{os.environ['PATH']}",
        "FROM": "lite-2.5.1",
        "TO": "lite",
        "ADAPTER": "my_rag.conformance:MyImplementation",
        "FAIL_ON_NOT_JUDGED": fail_on_not_judged,
        "GITHUB_STEP_SUMMARY": str(summary),
    }
    # The shell GitHub Actions runs a `run:` step with.
    done = subprocess.run(
        [bash, "--noprofile", "--norc", "-eo", "pipefail", str(script)],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == job_exit, done.stdout + done.stderr
    assert says in done.stdout
    assert "--from lite-2.5.1 --to lite --adapter my_rag.conformance:MyImplementation" in summary.read_text()


def test_the_step_the_docs_show_is_the_workflows(steps: list[dict[str, Any]]) -> None:
    page = (WORKFLOW.parents[2] / "docs" / "upgrade-check.md").read_text(encoding="utf-8")
    section = page.split("## In CI", 1)[1]
    block = section.split("```yaml\n", 1)[1].split("```", 1)[0]
    [shown] = yaml.safe_load(block)

    def commands(script: str) -> list[str]:
        return [line for line in script.splitlines() if not line.strip().startswith("#")]

    assert commands(shown["run"]) == commands(_step(steps, "Upgrade check")["run"])

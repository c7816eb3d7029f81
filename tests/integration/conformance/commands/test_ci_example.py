"""The GitHub Actions recipe in examples/github-actions: it is not run here, so check what can be checked.

Valid YAML, the steps a third party needs in order, the kit pinned to this kit's version, the CLI
commands it calls exist, and every shell script in it parses.
"""

from __future__ import annotations

import re
import shlex
import shutil
import subprocess
from importlib.metadata import version
from typing import Any

import pytest

from conformance.commands._cli import build_parser
from tests.integration.conformance.commands._workflows import RECIPES, load_workflow

WORKFLOW = RECIPES / "conformance.yml"


@pytest.fixture(scope="module")
def workflow() -> dict[str, Any]:
    return load_workflow("conformance.yml")


@pytest.fixture(scope="module")
def steps(workflow: dict[str, Any]) -> list[dict[str, Any]]:
    return workflow["jobs"]["conformance"]["steps"]


def _index(steps: list[dict[str, Any]], needle: str) -> int:
    """The first step whose uses/run mentions ``needle``."""
    return next(i for i, s in enumerate(steps) if needle in f"{s.get('uses', '')} {s.get('run', '')}")


def test_triggers_on_pull_requests_and_pushes_to_main(workflow: dict[str, Any]) -> None:
    # YAML 1.1 (PyYAML) reads the bare key `on` as the boolean True.
    triggers: dict[str, Any] = workflow["on"] if "on" in workflow else workflow[True]  # type: ignore[index]
    assert triggers["push"]["branches"] == ["main"]
    assert "pull_request" in triggers


def test_the_kit_is_pinned_to_this_version(workflow: dict[str, Any], steps: list[dict[str, Any]]) -> None:
    assert workflow["env"]["KIT_VERSION"] == version("rag-quality-conformance")
    install = steps[_index(steps, "pip install")]["run"]
    assert 'pip install "rag-quality-conformance==${KIT_VERSION}"' in install


def test_steps_run_upload_download_then_diff_in_order(steps: list[dict[str, Any]]) -> None:
    order = [
        _index(steps, "actions/checkout"),
        _index(steps, "rag-quality-conformance=="),
        _index(steps, "rag-conformance run --adapter"),
        _index(steps, "actions/upload-artifact"),
        _index(steps, "gh run download"),
        _index(steps, "rag-conformance diff"),
    ]
    assert order == sorted(order)
    kit = steps[order[2]]
    assert kit["continue-on-error"] is True  # the report is uploaded and diffed even when the run fails
    upload = steps[order[3]]
    assert upload["if"] == "always()"
    assert upload["with"]["name"] == "conformance-report"
    assert "conformance-report" in steps[order[4]]["run"]  # downloads the artifact it uploads
    assert "previous-report/report.json rqs-report/report.json" in steps[order[5]]["run"]


def test_its_command_lines_parse(steps: list[dict[str, Any]]) -> None:
    """Each ``rag-conformance`` line, up to a redirection, is accepted by this kit's parser."""
    lines = [
        line.strip().split(" >")[0]
        for step in steps
        for line in step.get("run", "").splitlines()
        if line.strip().startswith("rag-conformance ")
    ]
    parsed = [build_parser().parse_args(shlex.split(line)[1:]) for line in lines]
    assert [args.command for args in parsed] == ["run", "diff", "docs"]
    assert parsed[0].report == "rqs-report"
    assert parsed[2].results == ["rqs-report"]


@pytest.mark.skipif(shutil.which("bash") is None, reason="bash is not installed: cannot parse the scripts")
def test_every_script_parses_as_bash(steps: list[dict[str, Any]]) -> None:
    for step in steps:
        if "run" not in step:
            continue
        script = re.sub(r"\$\{\{[^}]*\}\}", "EXPR", step["run"])  # Actions expressions, expanded before bash
        done = subprocess.run(["bash", "-n"], input=script, capture_output=True, text=True, check=False)
        assert done.returncode == 0, f"{step.get('name')}: {done.stderr}"

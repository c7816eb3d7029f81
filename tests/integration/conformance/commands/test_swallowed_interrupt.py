"""A Ctrl-C whose interrupt Python swallows still stops the run.

A signal handler runs wherever the main thread is. Inside a destructor or a gc callback (Hypothesis keeps
one), the interrupt it raises only reaches ``sys.unraisablehook``: on a loaded machine, about one Ctrl-C in
six was lost that way and the run went on to CONFORMS, exit 0. The kit keeps such an interrupt and raises
it again at the next scenario, step or call of the implementation.
"""

from __future__ import annotations

import json
from pathlib import Path

from .ctrl_c_in_a_destructor import DIAGNOSIS
from .test_cli_exit_codes import rag_conformance


def test_a_ctrl_c_raised_inside_a_destructor_ends_the_run_interrupted(tmp_path: Path) -> None:
    adapter = "tests.integration.conformance.commands.ctrl_c_in_a_destructor:CtrlCInADestructor"
    done, _ = rag_conformance("run", "--adapter", adapter, "--report", "out", cwd=tmp_path)
    output = done.stdout + done.stderr
    diagnosis = tmp_path / DIAGNOSIS
    assert done.returncode == 130, output + (diagnosis.read_text() if diagnosis.exists() else "")
    report = json.loads((tmp_path / "out" / "report.json").read_text())
    assert report["verdict"] == "INTERRUPTED", output
    assert report["interruption"]["signal"] == "SIGINT"
    assert "Traceback" not in output

"""One hostile stdio program across the subcommands and their outputs: its control characters are
shown as escapes, never sent to a terminal, and never break an XML file (issue 45, cases 2 and 3).

The program names itself with an OSC title sequence and a screen clear, answers labels with ESC in
them, logs in colour to stderr (as loguru, chalk and rich do) and crashes on a quality call. A
variant crashes in colour before its handshake.
"""

from __future__ import annotations

import json
import shlex
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from .test_cli_exit_codes import rag_conformance

# What must never reach a terminal or an XML file raw: ESC, BEL, a one-byte CSI.
RAW = ("\x1b", "\x07", "\x9b")

HOSTILE = r"""
import json, sys
for line in sys.stdin:
    m = json.loads(line)
    out = {"seq": m["seq"], "result": None}
    if m["type"] == "start":
        if "--no-handshake" in sys.argv:
            sys.stderr.write("\x1b[31mERROR\x1b[0m cannot start: \x1b]0;owned\x07\x1b[2J\n")
            sys.exit(3)
        out["result"] = {"name": "ev\x1b]0;owned\x07il\x1b[2J", "version": "1\x9b31m",
                         "capabilities": ["labels", "quality"]}
    elif m["type"] == "canonicalize_label":
        out["result"] = "\x1b[2Jdense\x07"
    elif m["type"] == "quality_score":
        sys.stderr.write("\x1b[31mERROR\x1b[0m quality failed \x1b[2J\x07\n")
        sys.stderr.flush()
        sys.exit(3)
    print(json.dumps(out), flush=True)
"""


def _program(tmp_path: Path, *flags: str) -> str:
    path = tmp_path / "hostile.py"
    path.write_text(HOSTILE)
    return shlex.join([sys.executable, str(path), *flags])


def _assert_shown_not_sent(text: str) -> None:
    for char in RAW:
        assert char not in text, repr(text[max(0, text.find(char) - 80) : text.find(char) + 80])


def _assert_xml(path: Path) -> ET.Element:
    raw = path.read_text(encoding="utf-8")
    _assert_shown_not_sent(raw)
    return ET.fromstring(raw)  # XML 1.0: one ESC byte and this raises


def test_run_shows_the_programs_escapes_and_its_junit_stays_xml(tmp_path: Path) -> None:
    command = _program(tmp_path)
    done, _ = rag_conformance(
        "run", "--adapter-cmd", command, "--report", "out", "-k", "legacy-aliases-canonicalize", cwd=tmp_path
    )
    assert done.returncode == 1, done.stdout + done.stderr  # its wrong labels and its crash are its own
    _assert_shown_not_sent(done.stdout + done.stderr)
    root = _assert_xml(tmp_path / "out" / "junit.xml")
    messages = " ".join((e.text or "") + " ".join(e.attrib.values()) for e in root.iter())
    assert "\\x1b[31mERROR" in messages  # its colour code, shown: nothing it wrote is lost
    report = (tmp_path / "out" / "report.json").read_text()
    assert "\\u001b" not in report  # kept as the visible escape, so every view of it is safe
    data = json.loads(report)
    assert "\\x1b]0;owned\\x07" in data["environment"]["adapter"]["name"]


def test_a_handshake_that_crashes_in_colour_is_not_judged_in_plain_text(tmp_path: Path) -> None:
    command = _program(tmp_path, "--no-handshake")
    done, _ = rag_conformance("run", "--adapter-cmd", command, "--report", "out", cwd=tmp_path)
    assert done.returncode == 2, done.stdout + done.stderr
    _assert_shown_not_sent(done.stdout + done.stderr)
    assert "\\x1b[31mERROR" in done.stderr
    root = _assert_xml(tmp_path / "out" / "junit.xml")
    assert any("cannot start" in (e.text or "") for e in root.iter("error"))


def test_smoke_shows_the_programs_escapes(tmp_path: Path) -> None:
    done, _ = rag_conformance("smoke", "--adapter-cmd", _program(tmp_path), cwd=tmp_path)
    assert done.returncode == 1, done.stdout + done.stderr
    _assert_shown_not_sent(done.stdout + done.stderr)
    assert "ev\\x1b]0;owned\\x07il\\x1b[2J" in done.stdout


@pytest.mark.parametrize("older", [False, True])
def test_diff_and_docs_show_the_escapes_of_any_report(tmp_path: Path, older: bool) -> None:
    command = _program(tmp_path)
    done, _ = rag_conformance(
        "run", "--adapter-cmd", command, "--report", "new", "-k", "legacy-aliases-canonicalize", cwd=tmp_path
    )
    assert done.returncode == 1, done.stdout + done.stderr
    report = json.loads((tmp_path / "new" / "report.json").read_text())
    if older:  # a report an older kit wrote, with the program's bytes raw in it
        for scenario in report["scenarios"]:
            scenario["id"] += "\x1b[2J"
            scenario["message"] = (scenario["message"] or "") + "\x1b]0;owned\x07"
        (tmp_path / "new" / "report.json").write_text(json.dumps(report))
    old = {**report, "scenarios": [{**s, "status": "passed", "message": None} for s in report["scenarios"]]}
    (tmp_path / "old.json").write_text(json.dumps(old))
    done, _ = rag_conformance("diff", "old.json", "new", cwd=tmp_path)
    assert done.returncode == 1, done.stdout + done.stderr
    _assert_shown_not_sent(done.stdout + done.stderr)
    done, _ = rag_conformance("docs", "--results", "new", "--out", "site", cwd=tmp_path)
    assert done.returncode == 0, done.stdout + done.stderr
    for page in (tmp_path / "site").rglob("*"):
        if page.is_file():
            _assert_shown_not_sent(page.read_text(encoding="utf-8"))

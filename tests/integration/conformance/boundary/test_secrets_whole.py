"""Secrets whole (issue 53.3): a Milvus credential in any form a user types appears nowhere the kit
writes or passes on: its output, its files and their names, report.json, junit.xml, the docs site, and a
program under test's argv and environment.

Each run gives one form on ``--milvus`` and two more in the environment (``MILVUS_TOKEN``, and
``MILVUS_URI`` with a password), against a stdio program that records its argv and environment and
declares search, so the run reaches for the (unreachable) engine and says so. Every secret is unique to
its form, and is looked for as typed and percent-decoded.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

# (what --milvus gets, the secrets in it as typed and decoded)
FORMS = {
    "scheme-userinfo": ("uri:http://alice:S1cretAlpha@127.0.0.1:1", ("S1cretAlpha", "alice:S1cretAlpha")),
    "no-scheme": ("uri:alice:S2cretBravo@127.0.0.1:1", ("S2cretBravo", "alice:S2cretBravo")),
    "token-param": ("uri:http://127.0.0.1:1?token=S3cretCharlie", ("S3cretCharlie",)),
    "api-key-param": ("uri:http://127.0.0.1:1/?db=x&api_key=S4cretDelta", ("S4cretDelta",)),
    "percent-encoded": (
        "uri:http://bob:S5cret%40Echo%2F@127.0.0.1:1",
        ("S5cret%40Echo%2F", "S5cret@Echo/", "bob:S5cret@Echo/"),
    ),
}
ENV_TOKEN = "S6cretFoxtrot"
ENV_URI_PASSWORD = "S7cretGolf"
ENVIRONMENT = {
    "MILVUS_TOKEN": ENV_TOKEN,
    "MILVUS_URI": f"http://carol:{ENV_URI_PASSWORD}@127.0.0.1:1",
    "MY_COPY_OF_THE_TOKEN": ENV_TOKEN,  # a variable of the user's that holds it
}

RECORDER = textwrap.dedent(
    """\
    import json, os, sys
    with open(sys.argv[1], "w") as record:
        json.dump({"argv": sys.argv, "env": dict(os.environ)}, record)
    for line in sys.stdin:
        m = json.loads(line)
        out = {"seq": m["seq"], "result": None}
        if m["type"] == "start":
            out["result"] = {"name": "recorder", "version": "1", "language": "python",
                             "capabilities": ["quality", "search"]}
        elif m["type"] == "quality_score":
            r = m["request"]
            out["result"] = max(0.0, 1 - min(r["score"] or 0, r["maxL2Distance"]) / r["maxL2Distance"])
        elif m["type"] == "search":
            out["result"] = {"hits": []}
        print(json.dumps(out), flush=True)
        if m["type"] == "stop":
            break
    """
)


def _everything_written(root: Path) -> str:
    """Every file's name and text under ``root`` (bytes read as UTF-8, errors replaced)."""
    parts = []
    for path in sorted(root.rglob("*")):
        parts.append(str(path.relative_to(root)))
        if path.is_file():
            parts.append(path.read_bytes().decode("utf-8", errors="replace"))
    return "\n".join(parts)


@pytest.mark.parametrize("form", sorted(FORMS))
def test_no_secret_of_any_form_appears_anywhere(tmp_path: Path, form: str) -> None:
    milvus, secrets = FORMS[form]
    every = (*secrets, ENV_TOKEN, ENV_URI_PASSWORD)
    program = tmp_path / "recorder.py"
    program.write_text(RECORDER)
    record = tmp_path / "child.json"
    report, site = tmp_path / "report", tmp_path / "site"
    cli = [sys.executable, "-m", "conformance.commands._cli"]
    env = {**os.environ, **ENVIRONMENT}
    run = subprocess.run(
        [
            *cli,
            "run",
            "--adapter-cmd",
            f"{sys.executable} {program} {record}",
            "--milvus",
            milvus,
            "--report",
            str(report),
            "-k",
            "dense-quality-from-l2",
        ],
        capture_output=True,
        text=True,
        env=env,
        timeout=600,
        check=False,
    )
    said = run.stdout + run.stderr
    assert (report / "report.json").is_file(), said[-3000:]
    assert (report / "junit.xml").is_file(), said[-3000:]
    docs = subprocess.run(
        [*cli, "docs", "--results", str(report), "--out", str(site)],
        capture_output=True,
        text=True,
        env=env,
        timeout=600,
        check=False,
    )
    said += docs.stdout + docs.stderr
    assert site.is_dir(), said[-3000:]
    child = json.loads(record.read_text())
    places = {
        "the terminal": said,
        "the report directory": _everything_written(report),
        "the docs site": _everything_written(site),
        "the program's argv": " ".join(child["argv"]),
        "the program's environment": json.dumps(child["env"]),
    }
    leaks = {where: [s for s in every if s in text] for where, text in places.items()}
    assert not any(leaks.values()), {where: found for where, found in leaks.items() if found}
    # The program starts without the Milvus variables at all (its endpoint comes over stdin).
    assert not {"MILVUS_TOKEN", "MILVUS_URI", "MY_COPY_OF_THE_TOKEN"} & set(child["env"])
    # And the redaction did not hide the address altogether: the host is still said.
    assert "127.0.0.1" in places["the report directory"]

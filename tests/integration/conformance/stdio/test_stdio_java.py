"""The Java example (the seed's three classes in Java 17, Gson from Debian) conforms on the pure
capabilities, judged over stdio under a C locale, its verdict says it is partial, and it writes UTF-8
whatever the locale.

Needs ``javac``/``java`` and Gson (``/usr/share/java/gson.jar``, or ``$GSON_JAR``); ``.ci/run``
installs them with apt-get. Without them the test is skipped, saying which is missing. The example is
compiled once per session and judged by one ``run``.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from conformance import Hints, PostProcessRequest, WireCandidate
from conformance.commands._runner import run_conformance
from conformance.stdio import StdioAdapter

EXAMPLE = Path(__file__).resolve().parents[4] / "examples" / "java"
DOC_ID = "知识库-é-№7"
TEXT = "Überprüfung der Rückgabe – 检索"


def _missing() -> str | None:
    """Why the example cannot be built here, or None."""
    for tool in ("javac", "java"):
        if shutil.which(tool) is None:
            return f"{tool} is not on PATH: install a JDK 17+ (Debian: apt-get install default-jdk-headless)"
    gson = os.environ.get("GSON_JAR", "/usr/share/java/gson.jar")
    if not Path(gson).is_file():
        return f"Gson is not at {gson}: apt-get install libgoogle-gson-java, or set GSON_JAR"
    return None


@pytest.fixture(scope="session")
def java_command(tmp_path_factory: pytest.TempPathFactory) -> str:
    """The command that runs the compiled example (compiled once per session)."""
    reason = _missing()
    if reason is not None:
        pytest.skip(reason)
    out = tmp_path_factory.mktemp("java-example")
    done = subprocess.run(
        ["sh", str(EXAMPLE / "build.sh"), str(out)], capture_output=True, text=True, timeout=300, check=False
    )
    assert done.returncode == 0, f"build.sh failed:\n{done.stdout}\n{done.stderr}"
    return done.stdout.strip().splitlines()[-1]  # the script prints the command that runs it


def test_the_java_example_writes_utf8_without_the_kits_help(java_command: str) -> None:
    """Under a C locale, with the kit's UTF-8 settings for the child taken away, ids and texts in other
    scripts still come back intact: the example opens its streams as UTF-8 itself, as its README says."""
    adapter = StdioAdapter(
        java_command, timeout=60, env={"LC_ALL": "C", "LANG": "C", "JAVA_TOOL_OPTIONS": ""}
    )
    try:
        assert adapter.describe().language == "java"
        candidate = WireCandidate(
            doc_id=DOC_ID, chunk_index=0, text=TEXT, original_rank=1, score_label="hybrid"
        )
        hints = Hints(keywords=("检索",))
        reply = adapter.post_process(PostProcessRequest(candidates=(candidate,), hints=hints))
        assert [(b.doc_id, b.evidence_key) for b in reply.blocks] == [(DOC_ID, f"{DOC_ID}#0")]
        assert "l0_keyword_overlap" in reply.blocks[0].hit_reasons  # the text was read as UTF-8 too
        adapter.close(strict=True)  # its stop reply carries "result": null, as the schema says
    finally:
        adapter.close()


def test_the_java_example_conforms_on_the_pure_capabilities_and_says_so(
    java_command: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A C locale, as on many CI images.
    monkeypatch.setenv("LANG", "C")
    monkeypatch.setenv("LC_ALL", "C")
    monkeypatch.delenv("JAVA_TOOL_OPTIONS", raising=False)
    outcome = run_conformance(f"cmd:{java_command}", report_dir=tmp_path, validate=True, strict_stdout=True)
    report = json.loads((tmp_path / "report.json").read_text())
    broken = [
        f"{s['id']}: {s['status']}: {s['message']}"
        for s in report["scenarios"]
        if s["status"] not in ("passed", "not_applicable")
    ]
    assert not broken, broken
    assert outcome.exit_code == 0
    assert report["verdict"] == "CONFORMS"
    assert report["verdict_text"].startswith("CONFORMS (pure capabilities: 7 of 12 spec scenarios judged")
    assert report["scope"]["not_judged"] == ["R2", "R6"]
    assert report["environment"]["adapter"]["language"] == "java"
    assert report["warnings"] == []
    assert report["notes"] == []
    assert report["summary"]["passed"] >= 20

"""The drift check as a user runs it: ``rag-conformance coverage --spec <edited copy>`` in a subprocess.

test_coverage.py checks the library (``check_coverage``); this checks the installed command end to end:
exit code, the scenario named in its output, and that the pinned spec is left as it was.
"""

from __future__ import annotations

import hashlib
import shutil
import subprocess
import sys
from pathlib import Path

from conformance.spec._paths import spec_path

# The console script beside this interpreter, as a user runs it; `python -m` only when it is not
# installed there (e.g. the package was put on sys.path without installing its scripts).
_SCRIPT = Path(sys.executable).with_name("rag-conformance")
COMMAND = [str(_SCRIPT)] if _SCRIPT.is_file() else [sys.executable, "-m", "conformance.commands._cli"]


def _coverage(spec: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*COMMAND, "coverage", "--spec", str(spec)],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def test_an_edited_copy_of_the_spec_fails_coverage_naming_the_scenario(tmp_path: Path) -> None:
    pinned = spec_path()
    before = hashlib.sha256(pinned.read_bytes()).hexdigest()
    copy = tmp_path / "edited-spec.md"
    shutil.copy(pinned, copy)
    text = copy.read_text(encoding="utf-8")
    edited = text.replace("rank `1` SHALL map to `1.0`", "rank `1` SHALL map to `0.9`")
    assert edited != text, "the sentence this test edits is gone from the spec; pick another"
    copy.write_text(edited, encoding="utf-8")

    result = _coverage(copy)

    assert result.returncode == 1, result.stdout + result.stderr
    # Scenario rows are indented; the closing summary line also counts "1 different-text".
    stale = [
        line for line in result.stdout.splitlines() if line.startswith("  ") and "different-text" in line
    ]
    assert len(stale) == 1, result.stdout
    assert "Hybrid quality from rank" in stale[0]
    assert "coverage FAILED" in result.stdout
    assert hashlib.sha256(pinned.read_bytes()).hexdigest() == before  # only the copy was checked


def test_an_unedited_copy_passes(tmp_path: Path) -> None:
    copy = tmp_path / "spec.md"
    shutil.copy(spec_path(), copy)
    result = _coverage(copy)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "coverage OK" in result.stdout

"""The reference adapter satisfies the Implementation Protocol, statically and at run time."""

from __future__ import annotations

import inspect
from pathlib import Path

from conformance import Implementation
from conformance.adapters.reference import ReferenceAdapter

TYPING_FILE = Path(__file__).resolve().parents[3] / "typing" / "protocol_assignments.py"


def test_mypy_accepts_the_reference_adapter_as_an_implementation() -> None:
    from mypy import api

    stdout, stderr, status = api.run(
        [str(TYPING_FILE), "--follow-imports=silent", "--ignore-missing-imports", "--no-error-summary"]
    )
    assert status == 0, stdout + stderr


def test_mypy_rejects_a_drifted_adapter(tmp_path: Path) -> None:
    drifted = tmp_path / "drifted.py"
    drifted.write_text(
        "from conformance import Implementation\n"
        "from conformance.adapters.reference import ReferenceAdapter\n"
        "class Drifted(ReferenceAdapter):\n"
        "    def search(self, request: str, extra: int) -> None: ...\n"
        "x: Implementation = Drifted()\n"
    )
    from mypy import api

    stdout, _, status = api.run([str(drifted), "--follow-imports=silent", "--ignore-missing-imports"])
    assert status != 0
    assert "Implementation" in stdout


def test_runtime_signatures_match_the_protocol() -> None:
    assert isinstance(ReferenceAdapter(), Implementation)
    for name, member in inspect.getmembers(Implementation, inspect.isfunction):
        if name.startswith("_"):
            continue
        expected = list(inspect.signature(member).parameters)
        actual = list(inspect.signature(getattr(ReferenceAdapter, name)).parameters)
        assert actual == expected, f"{name}: {actual} != {expected}"

"""The unit tier starts nothing: every test under tests/unit runs inside the guard of ``_guard.py``.

A unit test that starts a process (subprocess, fork/exec, multiprocessing), opens a Milvus client or a
gRPC channel, or connects to another host or a local daemon's socket FAILS, with a message that says to
move it to tests/integration (tests/README.md). Package scope, so the module fixtures of unit tests
(set up after it) are inside the guard too.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.unit._guard import forbid_starting_things


@pytest.fixture(scope="package", autouse=True)
def _unit_tier_starts_nothing() -> Iterator[None]:
    with forbid_starting_things():
        yield

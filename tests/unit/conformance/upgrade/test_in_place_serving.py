"""After the new engine opens the old data, a collection counts as open once it serves, not when the
engine calls it loaded: Milvus 2.3.5 on 2.2.16's data answered "collection not loaded" to every search
for a while after its load call returned, and the in-place check took that for changed answers."""

from __future__ import annotations

from typing import Any

import pytest

from conformance.upgrade import _in_place
from conformance.upgrade._in_place_values import InPlaceResult

_NOT_LOADED = "failed to query: collection not loaded[collection=470952598591504435]"


class _Restarted:
    """A client of an engine that serves its one collection after ``not_yet`` questions."""

    def __init__(self, not_yet: int) -> None:
        self.not_yet = not_yet
        self.asked = 0

    def list_collections(self) -> list[str]:
        return ["kb"]

    def load_collection(self, name: str, timeout: float) -> None:
        pass  # "loaded", at once

    def query(self, name: str, filter: str, output_fields: list[str]) -> list[dict[str, Any]]:
        self.asked += 1
        if self.asked <= self.not_yet:
            raise RuntimeError(_NOT_LOADED)
        return [{"count(*)": 156}]

    def describe_collection(self, name: str) -> dict[str, Any]:
        return {"fields": []}

    def list_indexes(self, name: str) -> list[str]:
        return []


class _Engine:
    def __init__(self, client: _Restarted) -> None:
        self._client = client

    def client(self) -> _Restarted:
        return self._client

    def check_reachable(self) -> None:
        pass


@pytest.fixture(autouse=True)
def _quick(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(_in_place, "_SERVE_POLL_SECONDS", 0.001)


def test_a_collection_the_engine_calls_loaded_is_waited_for_until_it_serves_and_the_wait_is_said() -> None:
    client = _Restarted(not_yet=3)
    [state] = _in_place._inventory(_Engine(client), flush=False)  # type: ignore[arg-type]
    assert state.problem is None
    assert state.rows == 156
    assert client.asked == 5  # three not yet, the one that serves, then the count
    assert state.serving_after is not None
    assert (
        state.until_serving
        == "RuntimeError: failed to query: collection not loaded[collection=470952598591504435]"
    )
    result = InPlaceResult(
        old="milvus-2.2.16", new="milvus-2.3.5", verdict="UNCHANGED", before=(state,), after=(state,)
    )
    [said] = [line for line in result.lines() if "served" in line]
    assert said.startswith("in place: kb served ")
    assert said.endswith("s after its load returned; until then it answered " + state.until_serving)


def test_a_collection_that_serves_at_once_says_nothing_of_it() -> None:
    [state] = _in_place._inventory(_Engine(_Restarted(not_yet=0)), flush=False)  # type: ignore[arg-type]
    assert (state.serving_after, state.until_serving, state.problem) == (None, None, None)


def test_one_that_never_serves_is_the_finding_with_the_engines_words(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(_in_place, "LOAD_SECONDS", 0.05)
    [state] = _in_place._inventory(_Engine(_Restarted(not_yet=10**9)), flush=False)  # type: ignore[arg-type]
    assert state.problem is not None
    assert state.problem.startswith("load failed: RuntimeError: failed to query: collection not loaded")

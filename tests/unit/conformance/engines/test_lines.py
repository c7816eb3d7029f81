"""The engine lines: one table, one name per line, and which lines share data in an in-place upgrade."""

from __future__ import annotations

import pytest

from conformance.engines import parse_engine_address
from conformance.engines._address import ENGINE_HELP
from conformance.engines._facts import engine_facts
from conformance.engines._lines import DATA, LOCAL_ENGINES, MATRIX_LINES, RUNS, engine_lines, shares_data


def test_every_line_is_a_name_every_command_takes_and_pins_its_package() -> None:
    assert [line.name for line in engine_lines()] == list(LOCAL_ENGINES)
    for line in engine_lines():
        assert parse_engine_address(line.name).target == line.name
        assert line.name in ENGINE_HELP
        package = "milvus-lite" if line.name.startswith("lite-") else "milvus"
        version = line.name.split("-", 1)[1]
        assert f"{package}=={version}" in line.requirements  # installed exactly, once, into its venv
        assert line.kind in RUNS
        assert line.data == DATA[line.kind]
    assert set(MATRIX_LINES) <= set(LOCAL_ENGINES)


def test_only_the_server_lines_hold_the_fixed_etcd_port() -> None:
    assert {n for n, line in LOCAL_ENGINES.items() if line.fixed_ports} == {"milvus-2.2.16", "milvus-2.3.5"}


@pytest.mark.parametrize(
    ("old", "new", "shared"),
    [
        ("lite-2.4.12", "lite-2.5.1", True),
        ("lite-2.5.1", None, True),  # None: the kit's own Lite 3.x
        ("lite-3.1.1", "lite-3.2.2", True),
        ("milvus-2.2.16", "milvus-2.3.5", True),
        ("lite-2.5.1", "milvus-2.3.5", False),
        ("milvus-2.3.5", None, False),
    ],
)
def test_lite_lines_share_a_lite_file_and_server_lines_a_data_directory(
    old: str, new: str | None, shared: bool
) -> None:
    assert shares_data(LOCAL_ENGINES[old], LOCAL_ENGINES[new] if new else None) is shared


def test_lite_2_4_has_no_bm25_and_2_5_has() -> None:
    old, new = engine_facts("milvus_lite-2.4.12"), engine_facts("milvus_lite-2.5.1")
    assert (old.bm25, old.hybrid_search, old.bm25_scores, old.api_level) == (False, True, None, "2.4")
    assert (new.bm25, new.bm25_scores, new.api_level) == (True, "non-negative", "2.5")

"""A server line whose fixed port was taken while it started is named at once, not after its budget."""

from __future__ import annotations

from pathlib import Path

import pytest

from conformance.engines import EngineUnavailableError
from conformance.engines._lines import LOCAL_ENGINES
from conformance.engines._local import LocalServer


def _server(name: str, data_dir: Path) -> LocalServer:
    server = object.__new__(LocalServer)  # the check reads the spec and the data dir only: nothing starts
    server.spec, server.data_dir = LOCAL_ENGINES[name], data_dir
    return server


def test_a_taken_fixed_port_in_the_go_servers_log_is_named(tmp_path: Path) -> None:
    logs = tmp_path / "logs"
    logs.mkdir()
    (logs / "standalone-1.log").write_text(
        '["failed to init embedded Etcd server"] [error="listen tcp '
        '127.0.0.1:2380: bind: address already in use"]\n'
    )
    with pytest.raises(EngineUnavailableError, match=r"could not bind its fixed port\(s\) 2380"):
        _server("milvus-2.2.16", tmp_path)._check_ports_bound()


def test_a_log_without_it_or_a_line_without_fixed_ports_passes(tmp_path: Path) -> None:
    (tmp_path / "logs").mkdir()
    (tmp_path / "logs" / "standalone-1.log").write_text("starting\n")
    _server("milvus-2.3.5", tmp_path)._check_ports_bound()
    (tmp_path / "logs" / "x.log").write_text("bind: address already in use\n")
    _server("lite-2.5.1", tmp_path)._check_ports_bound()  # no fixed port: not its business

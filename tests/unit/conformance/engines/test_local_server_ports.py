"""A server line whose fixed port was taken while it started is named at once, not after its budget;
a port the last server just left (TIME_WAIT) is not called taken."""

from __future__ import annotations

import socket
from pathlib import Path

import pytest

from conformance.engines import EngineUnavailableError
from conformance.engines._lines import LOCAL_ENGINES
from conformance.engines._local import LocalServer, _bindable


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


def test_another_port_taken_is_named_as_itself_not_as_the_fixed_one(tmp_path: Path) -> None:
    # The proxy's port: the kit finds it free, then something else may take it before the server binds.
    (tmp_path / "logs").mkdir()
    (tmp_path / "logs" / "milvus-stdout.log").write_text(
        "[proxy] listen tcp 127.0.0.1:40123: bind: address already in use\n"
    )
    with pytest.raises(EngineUnavailableError, match=r"could not bind port 40123: another process") as exc:
        _server("milvus-2.3.5", tmp_path)._check_ports_bound()
    assert "2380" not in str(exc.value)


def test_a_port_in_time_wait_is_free_to_the_engine_a_listening_one_is_not() -> None:
    # What the Go server can bind (it sets SO_REUSEADDR): the last server's closed connections on its
    # port (TIME_WAIT, for a minute) do not hold it; a listener does.
    with socket.socket() as listener:
        listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        listener.bind(("127.0.0.1", 0))
        port = listener.getsockname()[1]
        listener.listen()
        assert not _bindable(port)
        client = socket.create_connection(("127.0.0.1", port))
        served, _ = listener.accept()
        served.close()  # the server's side closes first: its end of the connection stays in TIME_WAIT
        client.recv(1)
        client.close()
    # A plain bind, which the check used to be, calls the port held.
    with socket.socket() as plain, pytest.raises(OSError, match="Address already in use"):
        plain.bind(("127.0.0.1", port))
    assert _bindable(port)

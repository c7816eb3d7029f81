"""The unit tier's guard bites: a unit test that starts a process or a Milvus client fails, saying where
the test belongs instead; what a unit test may do (loopback sockets, in-process work) still works."""

from __future__ import annotations

import multiprocessing
import os
import socket
import subprocess
import textwrap

import pytest

from tests.unit._guard import UnitTierViolationError

MOVE = "move this test to tests/integration"


def test_a_subprocess_fails_saying_where_the_test_belongs() -> None:
    with pytest.raises(UnitTierViolationError, match=MOVE) as caught:
        subprocess.run(["true"], check=False)
    assert "subprocess" in caught.value.what


def test_fork_exec_and_multiprocessing_fail() -> None:
    with pytest.raises(UnitTierViolationError, match=r"os\.fork"):
        os.fork()
    with pytest.raises(UnitTierViolationError, match=r"os\.execv"):
        os.execv("/bin/true", ["true"])
    process = multiprocessing.get_context("spawn").Process(target=print)
    with pytest.raises(UnitTierViolationError, match="multiprocessing"):
        process.start()


def test_a_milvus_client_or_grpc_channel_fails() -> None:
    import grpc
    from pymilvus import MilvusClient, connections

    with pytest.raises(UnitTierViolationError, match="MilvusClient"):
        MilvusClient(uri="http://127.0.0.1:19530")
    with pytest.raises(UnitTierViolationError, match=r"connections\.connect"):
        connections.connect(alias="guard-test", uri="http://127.0.0.1:19530")
    with pytest.raises(UnitTierViolationError, match="gRPC channel"):
        grpc.insecure_channel("127.0.0.1:19530")


def test_a_connection_to_another_host_or_a_daemon_socket_fails() -> None:
    with socket.socket() as sock, pytest.raises(UnitTierViolationError, match="network connection"):
        sock.connect(("192.0.2.1", 80))  # TEST-NET-1: never routed, and never reached
    with socket.socket(socket.AF_UNIX) as sock, pytest.raises(UnitTierViolationError, match="local socket"):
        sock.connect("/var/run/docker.sock")


def test_a_loopback_connection_is_allowed() -> None:
    with socket.socket() as server:
        server.bind(("127.0.0.1", 0))
        server.listen(1)
        with socket.create_connection(server.getsockname(), timeout=5):
            pass


def test_a_unit_test_that_starts_a_process_fails_its_run(pytester: pytest.Pytester) -> None:
    """End to end, in process: a unit tier whose test starts a subprocess reports that test failed, with
    the message; a test that starts nothing passes beside it."""
    pytester.makeconftest("from tests.unit.conftest import _unit_tier_starts_nothing  # noqa: F401\n")
    pytester.makepyfile(
        test_inner=textwrap.dedent(
            """
            import subprocess

            def test_starts_a_process():
                subprocess.run(["true"], check=False)

            def test_starts_nothing():
                assert sum([1, 2]) == 3
            """
        )
    )
    result = pytester.runpytest_inprocess("-p", "no:cacheprovider", "-p", "no:xdist")
    result.assert_outcomes(passed=1, failed=1)
    result.stdout.fnmatch_lines([f"*UnitTierViolationError: a subprocess*{MOVE}*"])

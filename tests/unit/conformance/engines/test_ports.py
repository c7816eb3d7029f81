"""Whose server answers on a port: the listener's holders, read from /proc, and their parents."""

from __future__ import annotations

import os
import socket
import sys
from collections.abc import Iterator

import pytest

from conformance.engines._ports import free_port, port_open, served_by

pytestmark = pytest.mark.skipif(
    not sys.platform.startswith("linux"), reason="served_by reads /proc: Linux only (elsewhere it says None)"
)
NOT_AN_ANCESTOR = 2**22 + 17  # above Linux's largest pid: on no process's chain of parents


@pytest.fixture
def listening() -> Iterator[int]:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        sock.listen()
        yield sock.getsockname()[1]


def test_a_listener_of_this_process_is_served_by_it_and_by_its_parents(listening: int) -> None:
    assert port_open(listening)
    assert served_by(os.getpid(), listening) is True
    assert served_by(os.getppid(), listening) is True  # a server's engine may be its child


def test_a_listener_of_another_process_tree_is_not_served_by_the_given_one(listening: int) -> None:
    assert served_by(NOT_AN_ANCESTOR, listening) is False


def test_nothing_listening_cannot_be_told() -> None:
    port = free_port()
    assert not port_open(port)
    assert served_by(os.getpid(), port) is None

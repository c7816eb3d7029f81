"""Engines against real Milvus Lite servers: lifecycle, isolation by prefix, the uri backend.

The container backend has its own module, on a real Milvus image built here:
tests/integration/conformance/engines/test_container_engine.py.

One lite engine is shared by the module; tests that must own a server start their own.
"""

from __future__ import annotations

import os
import re
import signal
import socket
import subprocess
import sys
import tempfile
import textwrap
import time
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from conformance.engines import Engine, EngineError, EngineUnavailableError, start_engine
from conformance.engines._ports import free_port
from conformance.engines._proxy import RecordingProxy

pytest_plugins = ["pytester"]

PREFIX = re.compile(r"rqs_[0-9a-f]{8}_")
SECRET = "s3cret"


@pytest.fixture(scope="module")
def lite() -> Iterator[Engine]:
    with start_engine("lite") as engine:
        yield engine


def _port_in_use(port: int) -> bool:
    with socket.socket() as sock:
        return sock.connect_ex(("127.0.0.1", port)) == 0


def _process_gone(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except FileNotFoundError:
        return True
    return state in ("Z", "X")  # a zombie nobody reaped yet is gone for our purposes


def _wait_until(predicate: Callable[[], bool], timeout: float) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(0.1)
    return False


def _make(engine: Engine, name: str) -> str:
    engine.client().create_collection(name, dimension=4)
    return name


def test_lite_engine_describes_itself(lite: Engine) -> None:
    assert lite.backend == "lite"
    assert lite.server_version().startswith("milvus_lite-")
    assert re.fullmatch(r"http://127\.0\.0\.1:\d+", lite.endpoint.uri)
    assert PREFIX.fullmatch(lite.prefix)
    assert lite.endpoint.collection_prefix == lite.prefix
    assert lite.endpoint.token is None
    assert lite.describe() == {
        "backend": "lite",
        "uri": lite.endpoint.uri,
        "version": lite.server_version(),
        "prefix": lite.prefix,
    }
    assert lite.client() is lite.client()  # cached
    assert 0 < lite.startup_seconds < 30


def test_collection_name_keeps_milvus_rules(lite: Engine) -> None:
    assert lite.collection_name("oracle") == lite.prefix + "oracle"
    assert lite.collection_name("corpus-v1.2 dense") == lite.prefix + "corpus_v1_2_dense"
    with pytest.raises(EngineError, match="non-empty suffix"):
        lite.collection_name("")
    with pytest.raises(EngineError, match="Milvus allows 255"):
        lite.collection_name("x" * 250)


def test_cleanup_drops_only_this_runs_collections(lite: Engine) -> None:
    foreign = _make(lite, f"foreign_{uuid.uuid4().hex[:8]}")
    lookalike = _make(lite, "rqs_" + "0" * 8 + "_not_ours")  # another run's prefix
    try:
        ours = sorted(_make(lite, lite.collection_name(s)) for s in ("dense", "hybrid"))
        assert lite.cleanup() == ours
        remaining = set(lite.client().list_collections())
        assert {foreign, lookalike} <= remaining
        assert not any(name.startswith(lite.prefix) for name in remaining)
        assert lite.cleanup() == []
    finally:
        lite.client().drop_collection(foreign)
        lite.client().drop_collection(lookalike)


def test_cleanup_drops_collections_that_have_aliases(lite: Engine) -> None:
    name = _make(lite, lite.collection_name("aliased"))
    lite.client().create_alias(name, lite.collection_name("alias"))
    assert lite.cleanup() == [name]
    assert name not in lite.client().list_collections()


def test_uri_backend_reaches_a_running_server_without_showing_the_token(
    lite: Engine, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("MILVUS_TOKEN", SECRET)  # lite has no auth and ignores it
    with start_engine(f"uri:{lite.endpoint.uri}") as remote:
        assert remote.backend == "uri"
        assert remote.endpoint.token is not None
        assert remote.endpoint.token.get_secret_value() == SECRET
        assert remote.server_version() == lite.server_version()
        assert remote.prefix != lite.prefix
        for shown in (str(remote.describe()), repr(remote), str(remote.endpoint), repr(remote.endpoint)):
            assert SECRET not in shown
        theirs = _make(remote, remote.collection_name("oracle"))
        ours = _make(lite, lite.collection_name("oracle"))
        assert lite.cleanup() == [ours]  # the other run's prefixed collection stays
        assert theirs in lite.client().list_collections()
    # close() on a non-disposable engine cleans its prefix and leaves the server running.
    assert theirs not in lite.client().list_collections()
    assert remote.closed
    assert not lite.closed


def test_a_gone_engine_fails_the_health_probe_and_a_bounded_cleanup_in_seconds(
    lite: Engine, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("MILVUS_TOKEN", SECRET)
    with RecordingProxy(lite.endpoint.uri) as proxy:
        remote = start_engine(f"uri:{proxy.uri}")
        remote.check_reachable()  # a live engine answers
        left = _make(remote, remote.collection_name("left"))
    # The proxy is closed: to the kit's client, that engine is gone.
    started = time.monotonic()
    with pytest.raises(EngineUnavailableError, match=r"did not answer the kit's own client") as probe:
        remote.check_reachable(timeout=2)
    assert proxy.uri in str(probe.value)
    with pytest.raises(EngineError, match=r"collections starting with '.+' may remain") as cleanup:
        remote.close(timeout=2)
    assert time.monotonic() - started < 15, "a probe or a cleanup of a gone engine must not wait long"
    assert remote.closed
    assert SECRET not in str(probe.value) + str(cleanup.value)
    lite.client().drop_collection(left)


def test_uri_backend_reads_milvus_uri_from_the_environment(
    lite: Engine, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("MILVUS_URI", lite.endpoint.uri)
    monkeypatch.setenv("MILVUS_DB", "default")
    with start_engine("uri") as remote:
        assert remote.endpoint.uri == lite.endpoint.uri
        assert remote.endpoint.db_name == "default"


def test_unreachable_uri_fails_fast_naming_the_uri_not_the_secrets(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MILVUS_TOKEN", SECRET)
    with socket.socket() as sock:  # a port that was free a moment ago: nothing listens there
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    started = time.monotonic()
    with pytest.raises(EngineUnavailableError) as info:
        start_engine(f"uri:http://admin:hunter2@127.0.0.1:{port}")
    assert time.monotonic() - started < 10.5
    message = str(info.value)
    assert f"http://127.0.0.1:{port}" in message  # the user info travels as the token now
    assert "check that the server is running" in message
    assert SECRET not in message
    assert "hunter2" not in message
    assert SECRET not in repr(info.value)


def test_two_lite_engines_run_side_by_side_and_close_cleanly(
    lite: Engine, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))  # so we can see the server's temp dir
    other = start_engine("lite")
    port = int(other.endpoint.uri.rsplit(":", 1)[1])
    assert other.prefix != lite.prefix
    assert other.endpoint.uri != lite.endpoint.uri
    assert other.pid is not None
    assert not _process_gone(other.pid)
    assert [p.name[:9] for p in tmp_path.iterdir()] == ["rqs-lite-"]
    _make(other, other.collection_name("kept_until_stop"))

    started = time.monotonic()
    other.close()
    stop_seconds = time.monotonic() - started
    assert _process_gone(other.pid)
    assert not _port_in_use(port)
    assert list(tmp_path.iterdir()) == []
    assert stop_seconds < 8
    other.close()  # idempotent
    with pytest.raises(EngineError, match="closed"):
        other.client()
    assert lite.client().list_collections() is not None  # the shared engine is unaffected


def test_lite_on_a_given_dir_keeps_data_but_not_the_runs_collections(tmp_path: Path) -> None:
    data = tmp_path / "milvus"
    with start_engine(f"lite:{data}") as first:
        kept = _make(first, f"kept_{uuid.uuid4().hex[:8]}")
        _make(first, first.collection_name("scratch"))
        # One server per data dir: a second one fails and quotes the server's own words.
        with pytest.raises(EngineUnavailableError, match=r"(?s)exited with code.*lock"):
            start_engine(data_dir=data)
    assert data.is_dir()
    with start_engine(data_dir=data) as second:
        assert second.client().list_collections() == [kept]


def _run_script(body: str, **env: str) -> subprocess.CompletedProcess[str]:
    script = textwrap.dedent(body)
    return subprocess.run(
        [sys.executable, "-c", script],
        capture_output=True,
        text=True,
        timeout=60,
        env={**os.environ, **env},
        check=False,
    )


@pytest.mark.parametrize("ending", ["return", "sigterm"])
def test_run_that_forgets_close_or_is_terminated_still_cleans_its_prefix(lite: Engine, ending: str) -> None:
    # The child makes a prefixed collection on the shared server and then exits without close():
    # atexit must drop it, also when SIGTERM ends the process.
    result = _run_script(
        f"""
        import os, signal
        from conformance.engines import start_engine
        engine = start_engine("uri:{lite.endpoint.uri}", run_id="orphan{ending}")
        engine.client().create_collection(engine.collection_name("left"), dimension=4)
        if "{ending}" == "sigterm":
            os.kill(os.getpid(), signal.SIGTERM)
        """
    )
    # SIGTERM becomes KeyboardInterrupt, and an uncaught one ends Python by SIGINT (130 in a shell).
    assert result.returncode in (0, -signal.SIGINT, 130), result.stderr
    assert f"rqs_orphan{ending}_left" not in lite.client().list_collections()


def test_sigterm_inside_a_pytest_run_stops_the_session_and_cleans_up(
    lite: Engine, pytester: pytest.Pytester
) -> None:
    # A SystemExit raised in a test is recorded as that test's failure and the run goes on; the
    # handler must interrupt the session instead, so teardown (and cleanup) runs once and at once.
    pytester.makepyfile(
        f"""
        import os, signal
        import pytest
        from conformance.engines import start_engine

        @pytest.fixture(scope="session")
        def engine():
            with start_engine("uri:{lite.endpoint.uri}", run_id="sigtermrun") as e:
                yield e

        def test_terminated(engine):
            engine.client().create_collection(engine.collection_name("left"), dimension=4)
            os.kill(os.getpid(), signal.SIGTERM)

        def test_never_runs():
            raise AssertionError("the session should have stopped")
        """
    )
    result = pytester.runpytest_subprocess("-p", "no:rag_conformance")
    assert result.ret == pytest.ExitCode.INTERRUPTED, result.stdout.str()
    assert "test_never_runs" not in result.stdout.str()
    assert "rqs_sigtermrun_left" not in lite.client().list_collections()


def test_killed_run_leaves_no_orphan_lite_server(tmp_path: Path) -> None:
    # SIGKILL skips every handler in the parent; the server's parent-death watchdog must stop it.
    result = _run_script(
        f"""
        import os, signal, tempfile
        tempfile.tempdir = {str(tmp_path)!r}
        from conformance.engines import start_engine
        engine = start_engine("lite")
        print(engine.pid, flush=True)
        os.kill(os.getpid(), signal.SIGKILL)
        """
    )
    assert result.returncode == -9, result.stderr
    pid = int(result.stdout.split()[0])
    assert _wait_until(lambda: _process_gone(pid), timeout=10), f"lite server {pid} outlived its parent"
    assert _wait_until(lambda: not any(tmp_path.iterdir()), timeout=5)


def test_a_lite_start_whose_port_another_engine_holds_fails_instead_of_using_that_engine(
    lite: Engine,
) -> None:
    # The race a busy run loses now and then, made certain: the port the new server is to bind already
    # answers, as another engine. The new server fails to bind only after its start-up (about a second),
    # and until then the port's answer is the other engine's.
    from conformance.engines._lite import start_lite

    taken = int(lite.endpoint.uri.rsplit(":", 1)[1])
    with pytest.raises(EngineUnavailableError, match=f"port {taken} was taken"):  # not the other engine
        start_lite(data_dir=None, prefix="rqs_0badc0de_", startup_timeout=60.0, port=taken).close()
    assert lite.client().list_collections() is not None  # the other engine is untouched


def test_a_local_engine_whose_port_another_engine_holds_fails_instead_of_using_that_engine(
    lite: Engine,
) -> None:
    # The same race for the engine lines of the cache (here Lite 2.5.1, whose forwarder binds late).
    from conformance.engines._lines import LOCAL_ENGINES
    from conformance.engines._local import ensure_venv, start_local_engine

    try:
        ensure_venv(LOCAL_ENGINES["lite-2.5.1"])
    except EngineUnavailableError as exc:
        pytest.skip(f"engine lite-2.5.1 cannot be installed here: {exc}")
    taken = int(lite.endpoint.uri.rsplit(":", 1)[1])
    with pytest.raises(EngineUnavailableError, match=f"port {taken}: another process listens there"):
        start_local_engine("lite-2.5.1", port=taken).close()
    assert lite.client().list_collections() is not None


def _first_free_port_is(taken: int) -> Callable[[], int]:
    """A free-port finder whose first answer is ``taken`` (the race lost), and then the real ones."""
    answers = iter([taken])
    return lambda: next(answers, None) or free_port()


def test_a_lite_start_that_loses_its_port_to_another_engine_starts_on_another(
    lite: Engine, monkeypatch: pytest.MonkeyPatch
) -> None:
    from conformance.engines import _lite

    taken = int(lite.endpoint.uri.rsplit(":", 1)[1])
    monkeypatch.setattr(_lite, "free_port", _first_free_port_is(taken))
    with start_engine("lite") as own:
        assert own.endpoint.uri != lite.endpoint.uri
        assert own.client().list_collections() == []


def test_a_local_engine_start_that_loses_its_port_to_another_engine_starts_on_another(
    lite: Engine, monkeypatch: pytest.MonkeyPatch
) -> None:
    from conformance.engines import _local
    from conformance.engines._lines import LOCAL_ENGINES

    try:
        _local.ensure_venv(LOCAL_ENGINES["lite-2.5.1"])
    except EngineUnavailableError as exc:
        pytest.skip(f"engine lite-2.5.1 cannot be installed here: {exc}")
    taken = int(lite.endpoint.uri.rsplit(":", 1)[1])
    monkeypatch.setattr(_local, "free_port", _first_free_port_is(taken))
    with _local.start_local_engine("lite-2.5.1") as own:
        assert own.endpoint.uri != lite.endpoint.uri
        assert own.client().list_collections() == []


_SLOW_LISTENER = """
import socket, sys, time
time.sleep(0.5)  # an engine binary's start-up, before it binds
sock = socket.socket()
sock.bind(("127.0.0.1", int(sys.argv[1])))
sock.listen()
time.sleep(60)
"""


def test_the_lite_core_child_gives_its_engine_binary_a_private_port_no_other_process_holds(
    lite: Engine, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Behind the Lite 2.x forwarder: its binary's port is found free too, and the forwarder must not
    # pass the kit's calls to whoever took that port first.
    from conformance.engines import _local_child

    taken = int(lite.endpoint.uri.rsplit(":", 1)[1])
    ports = _local_child._ports()
    monkeypatch.setattr(ports, "free_port", _first_free_port_is(taken))
    monkeypatch.setattr(_local_child, "_ports", lambda: ports)

    def binary(port: int) -> subprocess.Popen[bytes]:
        return subprocess.Popen([sys.executable, "-c", _SLOW_LISTENER, str(port)], stderr=subprocess.DEVNULL)

    proc, inner = _local_child._on_a_private_port(binary)
    try:
        assert inner != taken
        assert proc.poll() is None
        assert ports.served_by(proc.pid, inner) is True
    finally:
        proc.kill()
        proc.wait()

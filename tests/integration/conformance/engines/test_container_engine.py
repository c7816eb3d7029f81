"""The container backend end to end: a real Milvus 2.3.5 server image built here, through testcontainers.

No mocks: each test starts real containers of the image ``rag-conformance build-image`` makes (cached;
see tests/container_image.py) with the real ``MilvusContainer``, and checks what a user sees: the
verdict and the report, the exit codes and messages of what goes wrong (a missing image, no Docker, a
container that never becomes ready), and that no container of the kit is left after any exit (a normal
end, SIGINT, SIGTERM; after a SIGKILL, once ``rag-conformance clean`` has run), while containers that
are not the kit's, and those of a run still going, are left alone. Skipped, with the reason, where no
Docker engine answers or the image cannot be built.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from conformance.engines import EngineUnavailableError, start_engine
from conformance.engines._container_sweep import LABEL_KIT, LABEL_PID, KitContainer, kit_containers
from tests.container_image import built_image, docker_or_skip
from tests.integration._signals import with_stop_signals_default

pytestmark = pytest.mark.docker

RUN_TIMEOUT = 600


@pytest.fixture(scope="module")
def image() -> str:
    return built_image()


@pytest.fixture(scope="module")
def docker_client() -> Iterator[object]:
    docker_or_skip()
    import docker

    client = docker.from_env()
    yield client
    client.close()


def _kit_containers(client: object, pid: int) -> list[object]:
    """The kit's containers owned by process ``pid``."""
    labels = [f"{LABEL_KIT}=true", f"{LABEL_PID}={pid}"]
    return client.containers.list(all=True, filters={"label": labels})  # type: ignore[attr-defined]


def _leftovers(client: object) -> list[KitContainer]:
    """The kit's containers whose owner process is gone: what a run left (other tests' are alive)."""
    return [c for c in kit_containers(client) if c.leftover]


@pytest.fixture
def earlier(docker_client: object) -> set[str]:
    """The ids of leftovers already there when the test began (a run killed before this suite, say):
    a test answers for what its own runs leave, not for the machine."""
    return {c.id for c in _leftovers(docker_client)}


def _new_leftovers(client: object, earlier: set[str]) -> list[KitContainer]:
    return [c for c in _leftovers(client) if c.id not in earlier]


def _cli(*args: str, cwd: Path, timeout: float = RUN_TIMEOUT, **env: str) -> subprocess.CompletedProcess[str]:
    command = [sys.executable, "-m", "conformance.commands._cli", *args]
    return subprocess.run(
        command,
        capture_output=True,
        text=True,
        timeout=timeout,
        cwd=cwd,
        env={**os.environ, **env},
        check=False,
    )


def _wait_for(predicate: object, timeout: float) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():  # type: ignore[operator]
            return True
        time.sleep(0.5)
    return False


# -- the verdict on the real server ---------------------------------------------------------------------


def test_the_reference_conforms_on_the_built_milvus_with_hybrid_not_applicable(
    image: str, docker_client: object, tmp_path: Path, earlier: set[str]
) -> None:
    result = _cli("run", "--milvus", f"container:{image}", "--report", str(tmp_path / "r"), cwd=tmp_path)
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    assert "Traceback" not in result.stderr
    report = json.loads((tmp_path / "r" / "report.json").read_text())
    assert report["verdict"] == "CONFORMS"
    milvus = report["environment"]["milvus"]
    assert milvus["backend"] == "container"
    assert milvus["version"].startswith("v2.3.5")  # the report names the engine's version
    assert report["summary"]["passed"] > 0
    # What 2.3.5 cannot serve is NOT APPLICABLE, for the engine's reason, never failed or errored.
    not_applicable = [s for s in report["scenarios"] if s["status"] == "not_applicable"]
    assert not_applicable, "2.3.5 has no hybrid search: some scenario must be NOT APPLICABLE"
    assert all(s["message"] for s in not_applicable)
    assert any("hybrid" in s["message"].lower() or "bm25" in s["message"].lower() for s in not_applicable)
    assert not report["summary"]["failed"]
    assert not report["summary"]["errored"]
    assert _new_leftovers(docker_client, earlier) == []  # removed at the end


def test_engines_command_judges_the_container_engine(image: str, tmp_path: Path) -> None:
    result = _cli(
        "engines", "--engine", f"container:{image}", "--report-dir", str(tmp_path / "m"), cwd=tmp_path
    )
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-2000:]
    matrix = json.loads((tmp_path / "m" / "matrix.json").read_text())
    assert [c["verdict"] for c in matrix] == ["CONFORMS"]
    assert matrix[0]["version"].startswith("v2.3.5")


def test_upgrade_from_the_container_to_lite_writes_its_reports(
    image: str, docker_client: object, tmp_path: Path, earlier: set[str]
) -> None:
    out = tmp_path / "u"
    result = _cli(
        "upgrade", "--from", f"container:{image}", "--to", "lite", "--limit", "6", "--no-plots",
        "--no-progress", "-k", "dense", "--out", str(out), cwd=tmp_path,
    )  # fmt: skip
    assert result.returncode in (0, 1), result.stdout[-3000:] + result.stderr[-3000:]
    assert "Traceback" not in result.stderr
    assert "verdict:" in result.stdout
    assert any(out.rglob("*.json")), "no report written"
    assert _new_leftovers(docker_client, earlier) == []  # not the suite's runs, not the evaluation


# -- every exit leaves no container; clean removes a killed run's, and only those ------------------------


@pytest.mark.parametrize(("signum", "code"), [(signal.SIGINT, 130), (signal.SIGTERM, 143)])
def test_a_signal_mid_run_removes_the_container(
    image: str, docker_client: object, tmp_path: Path, signum: int, code: int
) -> None:
    command = [sys.executable, "-m", "conformance.commands._cli", "run", "--milvus", f"container:{image}"]
    proc = subprocess.Popen(
        with_stop_signals_default([*command, "--report", str(tmp_path / "r")]),
        cwd=tmp_path,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:

        def serving() -> bool:
            found = _kit_containers(docker_client, proc.pid)
            return bool(found) and b"Welcome to use Milvus!" in found[0].logs()  # type: ignore[attr-defined]

        assert _wait_for(serving, timeout=120), "the run never had a ready container"
        time.sleep(3)  # well into the run: the container serves the scenarios
        proc.send_signal(signum)
        _, stderr = proc.communicate(timeout=120)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == code, stderr[-2000:]
    assert "Traceback" not in stderr
    assert json.loads((tmp_path / "r" / "report.json").read_text())["verdict"] == "INTERRUPTED"
    assert _kit_containers(docker_client, proc.pid) == []


def test_clean_removes_a_killed_runs_container_and_nothing_else(
    image: str, docker_client: object, tmp_path: Path, earlier: set[str]
) -> None:
    killed = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(f"""
            import os, signal
            from conformance.engines import start_engine
            engine = start_engine("container:{image}")
            print(os.getpid(), flush=True)
            os.kill(os.getpid(), signal.SIGKILL)
        """)],
        capture_output=True, text=True, timeout=300, check=False,
    )  # fmt: skip
    assert killed.returncode == -9, killed.stderr[-2000:]
    dead_pid = int(killed.stdout.split()[0])
    assert len(_kit_containers(docker_client, dead_pid)) == 1  # SIGKILL: nothing could remove it
    # Beside it: a container that is not the kit's, and one of a run still going (this process's).
    other = docker_client.containers.run(image, "sleep 600", detach=True, entrypoint="")  # type: ignore[attr-defined]
    try:
        with start_engine(f"container:{image}") as live:
            result = _cli("clean", cwd=tmp_path)
            assert result.returncode == 0, result.stderr
            assert _kit_containers(docker_client, dead_pid) == []
            # Leftovers of runs killed before this test are gone runs' too: clean rightly takes them.
            removed = 1 + len(earlier)
            assert f"removed {removed} kit container{'s' * (removed != 1)} of runs" in result.stdout
            assert len(_kit_containers(docker_client, os.getpid())) == 1  # the live run's: left alone
            live.check_reachable()
            other.reload()
            assert other.status == "running"
    finally:
        other.remove(force=True)
    assert _kit_containers(docker_client, os.getpid()) == []


def test_two_runs_at_once_get_separate_containers(image: str, docker_client: object) -> None:
    with start_engine(f"container:{image}") as first, start_engine(f"container:{image}") as second:
        assert first.endpoint.uri != second.endpoint.uri
        assert first.prefix != second.prefix
        mine = _kit_containers(docker_client, os.getpid())
        assert len(mine) == 2
        name = first.collection_name("only_here")
        first.client().create_collection(name, dimension=4)
        assert name not in second.client().list_collections()
    assert _kit_containers(docker_client, os.getpid()) == []


# -- what goes wrong: exit 2 NOT JUDGED, naming the image and what to do, no traceback -------------------


def test_a_missing_image_is_not_judged_and_says_how_to_build_one(
    docker_client: object, tmp_path: Path
) -> None:
    started = time.monotonic()
    result = _cli(
        "run", "--milvus", "container:rag-conformance/no-such-milvus:0.0", cwd=tmp_path, timeout=200
    )
    assert result.returncode == 2, result.stdout[-2000:] + result.stderr[-2000:]
    assert time.monotonic() - started < 150  # within the startup budget (120 s) and the kit's own start
    text = result.stdout + result.stderr
    assert "rag-conformance/no-such-milvus:0.0" in text
    assert "rag-conformance build-image" in text
    assert "NOT JUDGED" in text
    assert "Traceback" not in text


def test_no_docker_daemon_is_not_judged_at_once(tmp_path: Path) -> None:
    started = time.monotonic()
    result = _cli(
        "run", "--milvus", "container:rag-conformance/milvus:2.3.5", cwd=tmp_path, timeout=120,
        DOCKER_HOST="unix:///nonexistent/rqs/docker.sock",
    )  # fmt: skip
    assert result.returncode == 2
    assert time.monotonic() - started < 60
    text = result.stdout + result.stderr
    assert "no Docker engine is reachable" in text
    assert "--milvus lite" in text  # the command line's option, not pytest's --rqs-milvus (issue 55)
    assert "--rqs-milvus" not in text
    assert "dockerd" in text  # how to start a daemon the package installed but did not start
    assert "NOT JUDGED" in text
    assert "Traceback" not in text


@pytest.fixture(scope="module")
def never_ready_image(image: str, docker_client: object) -> Iterator[str]:
    """The built image with a ``milvus`` that starts no server: it never prints the welcome line."""
    base = docker_client.containers.create(image, entrypoint="", command="true")  # type: ignore[attr-defined]
    try:
        hanging = base.commit(
            repository="rag-conformance/test-never-ready",
            tag="1",
            # `milvus run standalone` becomes arguments of a shell that only sleeps: no server, no line.
            changes=['ENTRYPOINT ["/bin/sh", "-c", "sleep 600", "--"]'],
        )
    finally:
        base.remove(force=True)
    yield "rag-conformance/test-never-ready:1"
    docker_client.images.remove(hanging.id, force=True)  # type: ignore[attr-defined]


def test_a_container_that_never_becomes_ready_stops_within_the_budget(
    never_ready_image: str, docker_client: object
) -> None:
    started = time.monotonic()
    with pytest.raises(EngineUnavailableError) as info:
        start_engine(f"container:{never_ready_image}", startup_timeout=12)
    assert time.monotonic() - started < 40
    message = str(info.value)
    assert never_ready_image in message
    assert "did not become ready within 12 s" in message
    assert "rag-conformance build-image" in message
    assert _kit_containers(docker_client, os.getpid()) == []


def test_the_image_honours_testcontainers_contract(image: str, monkeypatch: pytest.MonkeyPatch) -> None:
    # The real MilvusContainer, as a user of testcontainers writes it: its command, env and waits.
    from pymilvus import MilvusClient
    from testcontainers.community.milvus import MilvusContainer
    from testcontainers.core.config import testcontainers_config

    monkeypatch.setattr(testcontainers_config, "ryuk_disabled", True)  # no registry for Ryuk's image

    with MilvusContainer(image) as milvus:
        client = MilvusClient(uri=milvus.get_connection_url())
        assert client.get_server_version().startswith("v2.3.5")
        client.close()
        logs = milvus.get_wrapped_container().logs().decode(errors="replace")
        assert "Welcome to use Milvus!" in logs

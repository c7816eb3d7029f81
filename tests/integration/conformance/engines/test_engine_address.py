"""Engine specs, prefixes, redaction and errors: everything that needs no running Milvus."""

from __future__ import annotations

import re
import subprocess
import sys
import time

import pytest

from conformance.boundary._errors import ConformanceError
from conformance.boundary._redact import redact_uri
from conformance.engines import (
    DEFAULT_MILVUS_IMAGE,
    DockerUnavailableError,
    EngineAddress,
    EngineError,
    EngineUnavailableError,
    parse_engine_address,
    start_engine,
)
from conformance.engines._address import ENGINE_HELP
from conformance.engines._engine import make_prefix
from conformance.engines._local import LOCAL_ENGINES


@pytest.mark.parametrize(
    ("spec", "expected"),
    [
        ("lite", EngineAddress("lite")),
        ("lite:/var/tmp/rqs data", EngineAddress("lite", "/var/tmp/rqs data")),
        ("uri", EngineAddress("uri")),
        ("uri:http://127.0.0.1:19530", EngineAddress("uri", "http://127.0.0.1:19530")),
        ("container", EngineAddress("container")),
        ("container:milvusdb/milvus:v2.6.0", EngineAddress("container", "milvusdb/milvus:v2.6.0")),
        (
            "container:localhost:5000/milvus:v2.5.16",
            EngineAddress("container", "localhost:5000/milvus:v2.5.16"),
        ),
        ("container:milvusdb/milvus@sha256:abc", EngineAddress("container", "milvusdb/milvus@sha256:abc")),
        (" lite ", EngineAddress("lite")),
        ("lite-2.5.1", EngineAddress("local", "lite-2.5.1")),
        ("milvus-2.3.5", EngineAddress("local", "milvus-2.3.5")),
        ("lite-2.4.12", EngineAddress("local", "lite-2.4.12")),
        ("lite-3.2.2", EngineAddress("local", "lite-3.2.2")),
        ("milvus-2.2.16", EngineAddress("local", "milvus-2.2.16")),
        (
            "container:rag-conformance/milvus:2.3.5",
            EngineAddress("container", "rag-conformance/milvus:2.3.5"),
        ),
    ],
)
def test_parse_backend_accepts_every_documented_form(spec: str, expected: EngineAddress) -> None:
    assert parse_engine_address(spec) == expected
    assert parse_engine_address(expected) is expected


@pytest.mark.parametrize(
    "spec", ["", "sqlite", "docker", "lite:", "uri:", "uri:localhost", "LITE", "lite-2.5", "milvus", 42, None]
)
def test_parse_backend_rejects_bad_specs_listing_valid_forms(spec: object) -> None:
    lines = "lite-2.4.12, lite-2.5.1, lite-3.0, lite-3.1.1, lite-3.2.2, milvus-2.2.16, milvus-2.3.5"
    with pytest.raises(EngineError, match=re.escape(f"valid forms are: lite, lite:<data dir>, {lines}, uri")):
        parse_engine_address(spec)  # type: ignore[arg-type]


def test_one_vocabulary_every_local_engine_is_a_name_and_the_help_lists_each_form() -> None:
    # The names `engines` runs from its cache are names of the one parser, printed as given.
    for name in LOCAL_ENGINES:
        assert str(parse_engine_address(name)) == name
        assert name in ENGINE_HELP
    for form in ("lite:<data dir>", "uri:<uri>", "container[:<image>:<tag>]"):
        assert form in ENGINE_HELP


def test_every_command_and_the_pytest_option_list_the_same_engine_names() -> None:
    # One help text: each command that takes an engine, and the pytest option, print ENGINE_HELP whole.
    import argparse

    from conformance.commands._cli import build_parser
    from conformance.options import add_pytest_options

    parser = build_parser()
    subcommands = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction)).choices
    wanted = {"run": "--milvus", "smoke": "--milvus", "selftest": "--milvus", "clean": "--milvus"}
    wanted |= {"engines": "--engine", "upgrade": "--from"}
    for command, flag in wanted.items():
        action = next(a for a in subcommands[command]._actions if flag in a.option_strings)
        assert ENGINE_HELP in (action.help or ""), (command, flag)

    class Group:
        helps: dict[str, str] = {}  # noqa: RUF012

        def addoption(self, flag: str, **kwargs: object) -> None:
            self.helps[flag] = str(kwargs.get("help"))

    group = Group()
    add_pytest_options(group, engines=ENGINE_HELP)
    assert ENGINE_HELP in group.helps["--rqs-milvus"]


def test_parse_backend_never_echoes_uri_credentials() -> None:
    with pytest.raises(EngineError) as info:
        parse_engine_address("uri:admin:hunter2@milvus.example")
    assert "hunter2" not in str(info.value)
    assert "milvus.example" in str(info.value)


@pytest.mark.parametrize(
    ("image", "match"),
    [
        ("milvusdb/milvus:latest", "moving tag 'latest'"),
        ("milvusdb/milvus", "has no tag"),
        ("localhost:5000/milvus", "has no tag"),
    ],
)
def test_container_image_must_be_pinned(image: str, match: str) -> None:
    with pytest.raises(EngineError, match=match) as info:
        parse_engine_address(f"container:{image}")
    assert DEFAULT_MILVUS_IMAGE in str(info.value)  # says what to use instead
    # start_engine refuses before looking for Docker, so the message is the useful one everywhere.
    with pytest.raises(EngineError, match=match) as started:
        start_engine(f"container:{image}")
    assert not isinstance(started.value, DockerUnavailableError)


def test_default_image_is_pinned() -> None:
    assert parse_engine_address(f"container:{DEFAULT_MILVUS_IMAGE}").target == DEFAULT_MILVUS_IMAGE


def test_container_without_docker_says_so_and_names_the_other_backends(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # Point the Docker client at a socket that cannot exist, so the test means the same with or
    # without a Docker engine on the machine.
    monkeypatch.setenv("DOCKER_HOST", "unix:///nonexistent/rqs/docker.sock")
    started = time.monotonic()
    with pytest.raises(DockerUnavailableError) as info:
        start_engine("container")
    assert time.monotonic() - started < 3.0
    message = str(info.value)
    assert "no Docker engine is reachable" in message
    assert "--rqs-milvus lite" in message
    assert "--rqs-milvus uri:<uri>" in message
    assert DEFAULT_MILVUS_IMAGE in message


def test_error_classes_share_the_kit_root() -> None:
    assert issubclass(DockerUnavailableError, EngineUnavailableError)
    assert issubclass(EngineUnavailableError, EngineError)
    assert issubclass(EngineError, ConformanceError)


def test_prefix_is_random_by_default_and_fixed_by_run_id() -> None:
    first, second = make_prefix(), make_prefix()
    assert first != second
    assert re.fullmatch(r"rqs_[0-9a-f]{8}_", first)
    assert make_prefix("nightly42") == "rqs_nightly42_"


@pytest.mark.parametrize("run_id", ["", "a_b", "a-b", "x" * 33, "é"])
def test_bad_run_id_is_rejected_before_anything_starts(run_id: str) -> None:
    started = time.monotonic()
    with pytest.raises(EngineError, match="letters or digits"):
        start_engine("lite", run_id=run_id)
    assert time.monotonic() - started < 1.0


def test_start_engine_rejects_conflicting_or_misplaced_arguments() -> None:
    with pytest.raises(EngineError, match="two data dirs"):
        start_engine("lite:/a", data_dir="/b")
    with pytest.raises(EngineError, match="lite and the local engine lines only"):
        start_engine("uri:http://127.0.0.1:1", data_dir="/b")
    with pytest.raises(EngineError, match="lite and the local engine lines only"):
        start_engine("container", port=19530)
    with pytest.raises(EngineError, match="startup_timeout must be positive"):
        start_engine("lite", startup_timeout=0)


def test_uri_backend_without_uri_says_what_to_set(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("MILVUS_URI", raising=False)
    with pytest.raises(EngineError, match="set MILVUS_URI") as info:
        start_engine("uri")
    assert "--rqs-milvus uri:<uri>" in str(info.value)


@pytest.mark.parametrize(
    ("uri", "shown"),
    [
        ("http://127.0.0.1:19530", "http://127.0.0.1:19530"),
        ("https://user:pa55@host.example:443/db", "https://***@host.example:443/db"),
        ("https://host.example?token=abc", "https://host.example?token=***"),
        ("https://host.example/?db=docs&api_key=k3y", "https://host.example/?db=docs&api_key=***"),
        ("user:pa55@host.example", "***@host.example"),
    ],
)
def test_redact_uri_hides_credentials(uri: str, shown: str) -> None:
    assert redact_uri(uri) == shown


def test_importing_engines_imports_no_heavy_dependency() -> None:
    code = (
        "import sys, conformance.engines\n"
        "heavy = sorted(m for m in sys.modules if m.split('.')[0] in "
        "{'pymilvus', 'testcontainers', 'docker', 'milvus_lite', 'grpc'})\n"
        "print(heavy)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"

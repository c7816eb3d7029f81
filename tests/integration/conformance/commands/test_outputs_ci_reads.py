"""Outputs a CI can always read (issue 45, cases 1, 5, 6 and 8): a full disk keeps the earlier report
and is NOT JUDGED in one line; a wrong option is refused before any work, in one line; secrets stay out
of report paths.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from conformance.boundary._redact import redact, register_secret, register_uri_secrets
from conformance.commands._engines import _slug
from conformance.engines import engine_label

from .test_cli_exit_codes import CLI, ROOT, rag_conformance

EXAMPLE = ROOT / "examples" / "python-stdio" / "impl.py"
ONE_SCENARIO = ("-k", "dense-quality-from-l2")

# Where no tmpfs can be mounted (not root), a full disk is injected: every fsync of a file under the
# named directory fails with ENOSPC, as a full tmpfs makes the kit's writes fail.
_FULL_DISK_HOOK = """
import errno, os
_full = os.environ.get("RQS_TEST_FULL_DISK")
if _full:
    _fsync = os.fsync
    def _fsync_on_a_full_disk(fd):
        if os.readlink(f"/proc/self/fd/{fd}").startswith(_full):
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        return _fsync(fd)
    os.fsync = _fsync_on_a_full_disk
"""


class FullDisk:
    """A directory whose disk can be filled: a 2 MB tmpfs when this runs as root, else injected."""

    def __init__(self, root: Path) -> None:
        self.path = root / "disk"
        self.path.mkdir()
        self.mounted = os.geteuid() == 0 and shutil.which("mount") is not None
        if self.mounted:
            mount = ["mount", "-t", "tmpfs", "-o", "size=2m", "tmpfs", str(self.path)]
            self.mounted = subprocess.run(mount, capture_output=True, check=False).returncode == 0
        self.hook = root / "hook"
        self.hook.mkdir()
        (self.hook / "sitecustomize.py").write_text(_FULL_DISK_HOOK)
        self.env: dict[str, str] = {}

    def fill(self) -> None:
        if self.mounted:
            with (self.path / "filler").open("wb") as filler:
                try:
                    while True:
                        filler.write(b"\0" * 65536)
                        filler.flush()
                except OSError:
                    pass
        else:
            self.env = {"RQS_TEST_FULL_DISK": str(self.path.resolve()), "PYTHONPATH": str(self.hook)}

    def unmount(self) -> None:
        if self.mounted:
            subprocess.run(["umount", str(self.path)], check=False)


@pytest.fixture
def full_disk(tmp_path: Path) -> Iterator[FullDisk]:
    disk = FullDisk(tmp_path)
    try:
        yield disk
    finally:
        disk.unmount()


def _cli(*args: str, cwd: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    if not env:
        return rag_conformance(*args, cwd=cwd)[0]
    command = [str(CLI)] if CLI.exists() else [sys.executable, "-m", "conformance.commands._cli"]
    full = {k: v for k, v in os.environ.items() if k not in ("PYTEST_ADDOPTS", "PYTEST_PLUGINS")}
    full.update(env)
    full["PYTHONPATH"] = os.pathsep.join([env["PYTHONPATH"], str(ROOT), os.environ.get("PYTHONPATH", "")])
    return subprocess.run([*command, *args], cwd=cwd, env=full, capture_output=True, text=True, check=False)


def _one_line_naming(done: subprocess.CompletedProcess[str], path: str, errno_name: str) -> None:
    output = done.stdout + done.stderr
    assert done.returncode == 2, output
    assert "Traceback" not in output, output
    lines = [line for line in output.splitlines() if path in line and errno_name in line]
    assert len(lines) >= 1, output


def test_a_full_disk_keeps_the_earlier_report_pair_and_is_not_judged(full_disk: FullDisk) -> None:
    where = full_disk.path.parent
    program = f"{sys.executable} {EXAMPLE}"
    first = _cli("run", "--adapter-cmd", program, "--report", "disk/r", *ONE_SCENARIO, cwd=where, env={})
    assert first.returncode == 0, first.stdout + first.stderr
    report, junit = (full_disk.path / "r" / name for name in ("report.json", "junit.xml"))
    before = report.read_bytes(), junit.read_bytes()
    full_disk.fill()
    done = _cli(
        "run", "--adapter-cmd", program, "--report", "disk/r", *ONE_SCENARIO, cwd=where, env=full_disk.env
    )
    _one_line_naming(done, "disk/r", "ENOSPC")  # refused by the write probe, before any scenario
    assert "nothing was run" in done.stderr
    assert (report.read_bytes(), junit.read_bytes()) == before  # the earlier pair, whole and matching
    assert json.loads(before[0])["verdict"] == "CONFORMS"
    assert not [p for p in (full_disk.path / "r").iterdir() if p.name.endswith(".tmp")]


def test_a_full_disk_keeps_the_earlier_site(full_disk: FullDisk) -> None:
    where = full_disk.path.parent
    program = f"{sys.executable} {EXAMPLE}"
    ran = _cli("run", "--adapter-cmd", program, "--report", "r", *ONE_SCENARIO, cwd=where, env={})
    assert ran.returncode == 0, ran.stdout + ran.stderr
    first = _cli("docs", "--results", "r", "--out", "disk/site", cwd=where, env={})
    assert first.returncode == 0, first.stdout + first.stderr
    pages = {p: p.read_bytes() for p in (full_disk.path / "site").rglob("*") if p.is_file()}
    full_disk.fill()
    done = _cli("docs", "--results", "r", "--out", "disk/site", cwd=where, env=full_disk.env)
    _one_line_naming(done, "disk/site", "ENOSPC")
    assert {p: p.read_bytes() for p in pages} == pages  # no page truncated


@pytest.mark.parametrize(
    ("args", "says"),
    [
        (("run", "--adapter-cmd", ""), "is empty"),  # a CI variable that expanded to nothing
        (("run", "--adapter-cmd", "   "), "is empty"),
        (("run", "--adapter", "cmd:"), "is empty"),
        (("run", "--adapter-cmd", "python 'impl.py"), "balance its quotes"),
        (("run", "--adapter-timeout", "nan"), "finite number of seconds"),
        (("run", "--adapter-timeout", "inf"), "finite number of seconds"),
        (("run", "--adapter-timeout", "-1"), "finite number of seconds"),
        (("run", "--seed", "-1"), "whole number from 0"),
        (("smoke", "--adapter-cmd", "x", "--adapter-timeout", "nan"), "finite number of seconds"),
        (("smoke", "--adapter-cmd", "python 'impl.py"), "balance its quotes"),
        (("selftest", "--jobs", "0"), "give 1 or more"),
        (("selftest", "--jobs", "-3"), "give 1 or more"),
        (("selftest", "--seed", "-1"), "whole number from 0"),
        (("upgrade", "--from", "lite", "--to", "lite", "--seed", "-1"), "whole number from 0"),
        (("upgrade", "--from", "lite", "--to", "lite", "--out", "a-file"), "is a file, not a directory"),
    ],
)
def test_a_wrong_option_is_refused_before_any_work_in_one_line(
    tmp_path: Path, args: tuple[str, ...], says: str
) -> None:
    (tmp_path / "a-file").write_text("")
    done, _ = rag_conformance(*args, *(("--report", "out") if args[0] == "run" else ()), cwd=tmp_path)
    output = done.stdout + done.stderr
    assert done.returncode == 2, output
    assert says in output
    assert len(output.strip().splitlines()) == 1, output
    assert not (tmp_path / "out").exists()  # nothing judged, nothing written


@pytest.mark.parametrize("shape", ["dangling-dir", "report-json-is-a-dir", "junit-xml-is-a-dir"])
def test_a_report_path_that_cannot_hold_the_report_is_refused_at_once(tmp_path: Path, shape: str) -> None:
    if shape == "dangling-dir":
        (tmp_path / "out").symlink_to(tmp_path / "gone" / "out")
    else:
        (tmp_path / "out" / shape.split("-is-")[0].replace("-", ".", 1)).mkdir(parents=True)
    done, _ = rag_conformance("run", "--report", "out", *ONE_SCENARIO, cwd=tmp_path)
    output = done.stdout + done.stderr
    assert done.returncode == 2, output
    assert "Traceback" not in output
    assert len(output.strip().splitlines()) == 1, output
    assert "dangling symlink" in output or "is a directory" in output
    assert "CONFORMS" not in output  # refused before the run, not after it


def test_a_password_with_a_raw_at_is_hidden_whole() -> None:
    uri = "http://alice:ret99x@pw@milvus.internal:19530"
    register_uri_secrets(uri)
    assert redact(f"cannot reach {uri}") == "cannot reach http://***@milvus.internal:19530"
    assert "ret99x" not in engine_label(f"uri:{uri}")
    # Unregistered too: the user info runs to the authority's last "@", as a URI parser reads it.
    assert redact("at http://bob:x@y@z@host:1/p?q") == "at http://***@host:1/p?q"


@pytest.mark.parametrize(
    "uri",
    [
        "http://host:19530/?token=Sup3rS3cret",
        "http://host:19530?api_key=Sup3rS3cret&db=x",
        "http://user:Sup3r@S3cret@host:19530",
        "user:Sup3rS3cret@host:19530",  # no scheme
        "http://user:Sup3r%40S3cret@host:19530",  # percent-encoded
        "http://host:19530?password=Sup3rS3cret",
    ],
)
def test_a_report_directory_name_never_holds_a_secret(uri: str) -> None:
    name = _slug(f"uri:{uri}")
    assert "Sup3r" not in name
    assert "S3cret" not in name
    assert name.startswith("uri-host_19530")


def test_evidence_keys_are_redacted_too() -> None:
    from conformance.reporting import Environment, not_judged_report
    from conformance.reporting._redacted import redacted

    register_secret("EchoedT0ken")
    environment = Environment(
        kit_version="0",
        spec_sha256=None,
        adapter={"name": "x", "extra": {"seen:EchoedT0ken": {"EchoedT0ken": 1}}},
        python="3",
        platform="linux",
    )
    shown = redacted(not_judged_report("why", environment)).model_dump_json()
    assert "EchoedT0ken" not in shown

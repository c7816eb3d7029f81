"""write_atomically: the earlier file survives every failure, and the failure names path and errno."""

from __future__ import annotations

import errno
import io
import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from conformance.boundary import OutputNotWrittenError, write_all_atomically, write_atomically


def test_text_and_bytes_are_written_whole(tmp_path: Path) -> None:
    write_atomically(tmp_path / "a.json", '{"ü": 1}\n')
    write_atomically(tmp_path / "b.bin", b"\x00\xff")
    assert (tmp_path / "a.json").read_text(encoding="utf-8") == '{"ü": 1}\n'
    assert (tmp_path / "b.bin").read_bytes() == b"\x00\xff"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a.json", "b.bin"]  # no temporary file left


def test_a_new_file_gets_the_umasks_mode_and_an_old_one_keeps_its_own(tmp_path: Path) -> None:
    fresh = write_atomically(tmp_path / "new.txt", "x")
    plain = tmp_path / "plain.txt"
    plain.write_text("x")  # what an ordinary open() gives, for comparison
    assert fresh.stat().st_mode & 0o777 == plain.stat().st_mode & 0o777
    plain.chmod(0o640)
    write_atomically(plain, "y")
    assert plain.stat().st_mode & 0o777 == 0o640


@pytest.mark.parametrize("failing", ["write", "fsync", "replace"])
def test_a_failure_at_any_step_keeps_the_earlier_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, failing: str
) -> None:
    report = tmp_path / "report.json"
    report.write_text('{"verdict": "CONFORMS"}\n')

    def full_disk(*args: object, **kwargs: object) -> None:
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    if failing == "write":
        real_fdopen = os.fdopen

        class FullDisk(io.BufferedWriter):
            write = full_disk  # type: ignore[assignment]

        monkeypatch.setattr("os.fdopen", lambda fd, mode: FullDisk(real_fdopen(fd, mode, buffering=0)))
    else:
        monkeypatch.setattr(f"os.{failing}", full_disk)
    with pytest.raises(OutputNotWrittenError) as caught:
        write_atomically(report, "x" * 10_000)
    monkeypatch.undo()
    assert json.loads(report.read_text()) == {"verdict": "CONFORMS"}
    assert [p.name for p in tmp_path.iterdir()] == ["report.json"]  # the temporary file is gone
    assert caught.value.errno == errno.ENOSPC
    assert caught.value.path == report
    message = str(caught.value)
    assert str(report) in message
    assert "Errno 28 ENOSPC" in message
    assert "\n" not in message


def test_a_directory_where_the_file_should_be_is_named(tmp_path: Path) -> None:
    (tmp_path / "junit.xml").mkdir()
    with pytest.raises(OutputNotWrittenError, match=r"junit\.xml.*EISDIR.*directory"):
        write_atomically(tmp_path / "junit.xml", "<x/>")


def test_a_missing_or_unwritable_directory_is_named(tmp_path: Path) -> None:
    with pytest.raises(OutputNotWrittenError, match="ENOENT") as caught:
        write_atomically(tmp_path / "absent" / "report.json", "{}")
    assert caught.value.errno == errno.ENOENT
    if os.geteuid() != 0:  # root writes anywhere
        locked = tmp_path / "locked"
        locked.mkdir(mode=0o500)
        with pytest.raises(OutputNotWrittenError, match="EACCES"):
            write_atomically(locked / "report.json", "{}")


def test_a_symlink_is_written_through_and_a_dangling_one_is_named(tmp_path: Path) -> None:
    target = tmp_path / "real.json"
    target.write_text("old")
    link = tmp_path / "link.json"
    link.symlink_to(target)
    write_atomically(link, "new")
    assert link.is_symlink()
    assert target.read_text() == "new"
    dangling = tmp_path / "dangling.json"
    dangling.symlink_to(tmp_path / "gone" / "report.json")
    with pytest.raises(OutputNotWrittenError, match=r"dangling\.json.*ENOENT"):
        write_atomically(dangling, "{}")


def test_a_lone_surrogate_is_written_escaped_not_lost(tmp_path: Path) -> None:
    write_atomically(tmp_path / "a.txt", "a\ud800b")
    assert (tmp_path / "a.txt").read_bytes() == b"a\\ud800b"


def _mount_tmpfs(where: Path, size: str) -> bool:
    if os.geteuid() != 0 or shutil.which("mount") is None:
        return False
    done = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(where)], capture_output=True
    )
    return done.returncode == 0


def test_on_a_real_full_disk_the_earlier_file_survives(tmp_path: Path) -> None:
    disk = tmp_path / "disk"
    disk.mkdir()
    if not _mount_tmpfs(disk, "256k"):
        pytest.skip("mounting a small tmpfs needs root and mount(8); the fault-injected cases above stand in")
    try:
        report = disk / "report.json"
        write_atomically(report, '{"verdict": "CONFORMS"}\n')
        with pytest.raises(OutputNotWrittenError, match="ENOSPC"):
            write_atomically(report, "x" * 1_000_000)
        assert json.loads(report.read_text()) == {"verdict": "CONFORMS"}
        assert [p.name for p in disk.iterdir()] == ["report.json"]
    finally:
        subprocess.run(["umount", str(disk)], check=False)


def test_files_written_together_are_renamed_only_once_all_are_on_the_disk(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    report, junit = tmp_path / "report.json", tmp_path / "junit.xml"
    report.write_text("old report")
    junit.write_text("old junit")
    real_fsync = os.fsync
    calls: list[int] = []

    def second_file_hits_a_full_disk(fd: int) -> None:
        calls.append(fd)
        if len(calls) == 2:
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        real_fsync(fd)

    monkeypatch.setattr("os.fsync", second_file_hits_a_full_disk)
    with pytest.raises(OutputNotWrittenError) as caught:
        write_all_atomically({report: "new report", junit: "new junit"})
    monkeypatch.undo()
    assert caught.value.path == junit
    assert (report.read_text(), junit.read_text()) == ("old report", "old junit")  # a matching pair
    assert sorted(p.name for p in tmp_path.iterdir()) == ["junit.xml", "report.json"]
    write_all_atomically({report: "new report", junit: "new junit"})
    assert (report.read_text(), junit.read_text()) == ("new report", "new junit")

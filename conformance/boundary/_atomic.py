"""Write a file so that a reader sees the earlier one or the new one, never half of either.

A report is written while a CI may be reading the last one, on a disk that may be full. Writing in
place destroys the earlier file at the first byte (a full disk left 4,096 bytes of invalid JSON where a
good report had been). :func:`write_atomically` writes a temporary file beside the target, flushes it
to the disk, and renames it over the target: a rename within one directory is atomic on POSIX and on
Windows (``os.replace``), so a failure at any step leaves the earlier file exactly as it was.

Every failure is one :class:`OutputNotWrittenError`, which names the path and the errno, so a command can
say NOT JUDGED in one line instead of a traceback.
"""

from __future__ import annotations

import contextlib
import errno as errno_codes
import os
import stat
import tempfile
from collections.abc import Mapping
from pathlib import Path

from ._errors import ConformanceError

__all__ = ["OutputNotWrittenError", "write_all_atomically", "write_atomically"]


class OutputNotWrittenError(ConformanceError):
    """A file the kit writes (a report, JUnit, the site, a matrix) could not be written.

    ``path`` is the file, ``errno`` its error number (``None`` when the failure had none, such as a
    directory where a file should be), ``reason`` the system's words. The earlier file, if any, is
    unchanged. Never a verdict about an implementation: the commands make it NOT JUDGED (exit 2).
    """

    def __init__(self, path: str | Path, errno: int | None, reason: str) -> None:
        self.path = Path(path)
        self.errno = errno
        self.reason = reason
        code = f"[Errno {errno} {errno_codes.errorcode.get(errno, '?')}] " if errno is not None else ""
        super().__init__(
            f"cannot write {self.path}: {code}{reason}; the earlier file, if any, is unchanged. "
            "Free space or fix the permissions there, or choose another output path"
        )


def write_atomically(path: str | Path, data: str | bytes) -> Path:
    """Write ``data`` (text as UTF-8) to ``path`` through a temporary file in the same directory, made
    durable (``fsync``) and then renamed over ``path``; return ``path``.

    A symlink is written through (its target is replaced, the link stays). On any failure the earlier
    file survives untouched, the temporary file is removed, and :class:`OutputNotWrittenError` says
    which path and which errno.
    """
    return write_all_atomically({path: data})[0]


def write_all_atomically(files: Mapping[str | Path, str | bytes]) -> list[Path]:
    """:func:`write_atomically` for files that belong together (``report.json`` and ``junit.xml``):
    every one is written to its temporary file first, and only when all of them are on the disk are
    they renamed, so a full disk leaves the earlier set whole rather than a new file beside an old one.
    """
    staged: list[tuple[Path, Path, str]] = []
    try:
        for path, data in files.items():
            staged.append(_stage(Path(path), data))
        for out, target, temporary in staged:
            try:
                os.replace(temporary, target)
            except OSError as exc:
                raise OutputNotWrittenError(out, exc.errno, exc.strerror or str(exc)) from exc
        for directory in {target.parent for _, target, _ in staged}:
            _sync_directory(directory)
    finally:
        for _, _, temporary in staged:
            with contextlib.suppress(OSError):
                os.unlink(temporary)  # gone already once renamed
    return [out for out, _, _ in staged]


def _stage(out: Path, data: str | bytes) -> tuple[Path, Path, str]:
    """(``out``, the file it writes to, a temporary file beside it holding ``data``, on the disk)."""
    # Text that cannot be UTF-8 (a lone surrogate from a program's output) is shown escaped, not lost.
    payload = data.encode("utf-8", "backslashreplace") if isinstance(data, str) else data
    target = Path(os.path.realpath(out))  # through a symlink, so the link is not replaced by a file
    if target.is_dir():
        raise OutputNotWrittenError(out, errno_codes.EISDIR, "it is a directory, not a file")
    temporary: str | None = None
    try:
        descriptor, temporary = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.", suffix=".tmp")
        with os.fdopen(descriptor, "wb") as stream:
            stream.write(payload)
            stream.flush()
            os.chmod(stream.fileno(), _mode_for(target))
            os.fsync(stream.fileno())
    except OSError as exc:
        if temporary is not None:
            with contextlib.suppress(OSError):
                os.unlink(temporary)
        raise OutputNotWrittenError(out, exc.errno, exc.strerror or str(exc)) from exc
    return out, target, temporary


def _mode_for(target: Path) -> int:
    """The earlier file's permissions, or what a plain ``open`` would give a new file (the umask's)."""
    try:
        return stat.S_IMODE(target.stat().st_mode)
    except OSError:
        return 0o666 & ~_umask()


def _umask() -> int:
    """The process's umask, read without changing it where the system says it (Linux), else 022."""
    with contextlib.suppress(OSError, ValueError):
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("Umask:"):
                return int(line.split()[1], 8)
    return 0o022


def _sync_directory(directory: Path) -> None:
    """Make the rename durable too; best effort (not every system opens a directory)."""
    if not hasattr(os, "O_DIRECTORY"):
        return
    with contextlib.suppress(OSError):
        fd = os.open(directory, os.O_RDONLY | os.O_DIRECTORY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)

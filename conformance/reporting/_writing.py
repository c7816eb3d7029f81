"""Where a run's report goes: the directory checked before anything starts, the files written as a pair.

``report.json`` and ``junit.xml`` are written together and atomically (``write_all_atomically``): a
full disk or an unwritable file leaves the earlier pair whole and is one
:class:`~conformance.boundary.OutputNotWrittenError`, which the run reports as NOT JUDGED (exit 2),
never as a verdict about the implementation.
"""

from __future__ import annotations

import contextlib
import errno
import os
import tempfile
from collections.abc import Sequence
from pathlib import Path

from ..boundary._atomic import OutputNotWrittenError, write_all_atomically
from ._junit import junit_xml
from ._report import Report

__all__ = ["REPORT_FILES", "OutputNotWrittenError", "output_dir_problem", "write_report_files"]

REPORT_FILES = ("report.json", "junit.xml")


def output_dir_problem(path: str | Path, files: Sequence[str] = ()) -> str | None:
    """Why the kit could not write its files into directory ``path`` (None if it can): checked before
    an engine starts, so a run never judges for minutes to find it has nowhere to put the verdict.
    ``files`` are the names it will write there: one that is a directory, or a dangling symlink whose
    target's directory is missing, is a problem too."""
    target = Path(path)
    if target.is_symlink() and not target.exists():
        return f"the report directory {path} is a dangling symlink (to {os.readlink(target)})"
    existing = next((p for p in (target, *target.parents) if p.exists()), None)
    if existing is None:
        return None
    if not existing.is_dir():
        where = "is" if existing == target else f"is inside {existing}, which is"
        return f"the report directory {path} {where} a file, not a directory"
    if existing != target and not os.access(existing, os.W_OK | os.X_OK):
        return f"the report directory {path} cannot be created: {existing} is not writable"
    if existing == target and not os.access(target, os.W_OK | os.X_OK):
        return f"the report directory {path} is not writable"
    for name in files if existing == target else ():
        inside = target / name
        if inside.is_dir():
            return f"{inside} is a directory, where the run writes its {name} file"
        if inside.is_symlink() and not Path(os.path.realpath(inside)).parent.is_dir():
            return f"{inside} is a dangling symlink (to {os.readlink(inside)}), where the run writes {name}"
    return _write_probe(target)


def _write_probe(target: Path) -> str | None:
    """Create ``target`` and one file in it, then remove what was made: what the permission bits cannot
    tell (root writes anywhere, but not into /proc or a read-only mount; a full disk) the try does."""
    made: list[Path] = []
    try:
        for folder in (*reversed(target.parents), target):
            if not folder.exists():
                folder.mkdir()
                made.append(folder)
        with tempfile.NamedTemporaryFile(dir=target, prefix=".rqs-write-probe-") as probe:
            probe.write(b"{}\n")
            probe.flush()
            os.fsync(probe.fileno())
    except OSError as exc:
        why = errno.errorcode.get(exc.errno or 0, "") or type(exc).__name__
        return f"the directory {target} cannot be written: {exc.strerror or exc} ({why})"
    finally:
        for folder in reversed(made):
            with contextlib.suppress(OSError):
                folder.rmdir()
    return None


def write_report_files(report: Report, directory: Path) -> list[Path]:
    """``report.json`` and ``junit.xml`` of ``report`` into ``directory`` (created), both or neither."""
    try:
        directory.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise OutputNotWrittenError(directory, exc.errno, exc.strerror or str(exc)) from exc
    return write_all_atomically(
        {
            directory / "report.json": report.model_dump_json(indent=2) + "\n",
            directory / "junit.xml": junit_xml(report),
        }
    )

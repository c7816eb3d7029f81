"""Known divergences as data: scenarios expected to fail on one engine or for one implementation.

An expectation names a scenario id, a reason, and whom it concerns: ``engine`` (a prefix of the
engine's server version, e.g. ``milvus_lite-3.``) and/or ``adapter`` (an implementation's name). The
kit ships the engines' in ``conformance/engines/expectations/*.toml``; ``--rqs-expectations FILE`` adds an
implementation's own. Where one applies, the scenario runs as a strict expected failure: while the
divergence lasts it is XFAILED with the reason, and the day it passes the run fails with "stale
expectation: remove it", so a fix is noticed instead of hidden.

The engine version is known only once the engine has started, so each scenario is decided at its
own setup, and only scenarios named by some expectation ever ask for the engine or the adapter.
"""

from __future__ import annotations

import tomllib
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from ..boundary._errors import ConformanceError

__all__ = [
    "SHIPPED_DIR",
    "Expectation",
    "ExpectationError",
    "load_expectations",
    "shipped_files",
]

SHIPPED_DIR = Path(__file__).resolve().parent / "expectations"
TABLE = "expected_failure"
_FIELDS = {"scenario", "reason", "engine", "adapter"}


class ExpectationError(ConformanceError):
    """An expectations file cannot be read or holds an invalid entry."""


@dataclass(frozen=True)
class Expectation:
    """One known divergence: ``scenario`` fails where ``engine`` and ``adapter`` (when set) match."""

    scenario: str
    reason: str
    engine: str | None = None
    adapter: str | None = None
    source: str = ""

    def applies(self, *, engine_version: str | None, adapter_name: str | None) -> bool:
        """Whether this expectation concerns the running engine and implementation."""
        if self.engine is not None and not (engine_version or "").startswith(self.engine):
            return False
        return self.adapter is None or self.adapter == adapter_name

    def marker_reason(self) -> str:
        """The xfail reason: the divergence, then where it is declared (to find it when stale)."""
        who = ", ".join(f"{k} {v!r}" for k, v in (("engine", self.engine), ("adapter", self.adapter)) if v)
        return f"{self.reason} (known divergence for {who}, declared in {self.source})"


def shipped_files() -> list[Path]:
    """The kit's own expectation files, in name order."""
    return sorted(SHIPPED_DIR.glob("*.toml")) if SHIPPED_DIR.is_dir() else []


def load_expectations(paths: Iterable[str | Path]) -> tuple[Expectation, ...]:
    """Read ``[[expected_failure]]`` entries from TOML files; :class:`ExpectationError` if invalid."""
    loaded: list[Expectation] = []
    for path in map(Path, paths):
        try:
            data = tomllib.loads(path.read_text(encoding="utf-8"))
        except (OSError, tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
            raise ExpectationError(f"cannot read expectations file {path}: {exc}") from None
        unknown = set(data) - {TABLE}
        if unknown:
            raise ExpectationError(
                f"{path}: unknown top-level key(s) {sorted(unknown)}; list entries as [[{TABLE}]] tables"
            )
        for number, entry in enumerate(data.get(TABLE, []), start=1):
            loaded.append(_entry(path, number, entry))
    return tuple(loaded)


def _entry(path: Path, number: int, entry: object) -> Expectation:
    where = f"{path}, [[{TABLE}]] #{number}"
    if not isinstance(entry, dict):
        raise ExpectationError(f"{where}: expected a table of keys, got {entry!r}")
    if unknown := set(entry) - _FIELDS:
        raise ExpectationError(f"{where}: unknown key(s) {sorted(unknown)}; use {sorted(_FIELDS)}")
    values = dict(entry)
    for key in _FIELDS:
        if key in values and (not isinstance(values[key], str) or not values[key].strip()):
            raise ExpectationError(f"{where}: {key!r} must be a non-empty string")
    for key in ("scenario", "reason"):
        if key not in values:
            raise ExpectationError(f"{where}: {key!r} is missing; every entry needs a scenario and a reason")
    if "engine" not in values and "adapter" not in values:
        raise ExpectationError(
            f"{where}: say whom it concerns with 'engine' (server version prefix) and/or 'adapter' (name)"
        )
    # Shipped files are named as in the source tree, so report messages do not depend on the install.
    shipped = path.resolve().parent == SHIPPED_DIR
    source = f"conformance/engines/expectations/{path.name}" if shipped else str(path)
    return Expectation(source=source, **values)

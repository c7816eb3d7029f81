"""Builds each library's venv once, runs the kit on every peer, and writes the matrix (``docs/peers.md``).

Runs in the kit's own environment (``pip install -e .``); the adapters run in their libraries' venvs,
cached outside the checkout under ``$RQS_PEERS_CACHE`` (default ``~/.cache/rag-conformance/peers``),
one per library, keyed by the hash of its ``requirements.txt``. venvs are built with uv when it can
be had (installed once into the cache with pip), else with ``venv`` and pip.

``docs/peers.md`` is generated: statuses and versions come from the reports, and the line explaining a
failure comes from ``<library>/explanations.toml``, keyed by scenario id. A failure without an
explanation, and an explanation whose failure is gone, are both reported as problems.
"""

from __future__ import annotations

import fcntl
import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import tomllib
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

__all__ = [
    "LIBRARIES",
    "Library",
    "PeersError",
    "compare",
    "ensure_venv",
    "explanation_problems",
    "parse_matrix",
    "render",
    "run_kit",
]

PEERS_DIR = Path(__file__).resolve().parent
REPO = PEERS_DIR.parents[1]
PEERS_MD = REPO / "docs" / "peers.md"
SEED = 15  # one fixed Hypothesis seed: a property verdict must not depend on the run
PROFILE = "selftest"  # 100 examples per property, no shrinking: verdicts, not minimal examples
REFERENCE = "reference"
FAILING = ("failed", "errored")
SHOWN = {"passed": "passed", "failed": "FAILED", "errored": "ERRORED", "not_applicable": "n/a"}
MATRIX_START = "<!-- peers-matrix: generated; the peers test compares it with a fresh run -->"
MATRIX_END = "<!-- /peers-matrix -->"


class PeersError(Exception):
    """A venv that cannot be built, a run without a report, or a matrix file that cannot be read."""


@dataclass(frozen=True)
class Library:
    """One library's folder: its adapter, pinned requirements and failure explanations."""

    key: str
    title: str

    @property
    def folder(self) -> Path:
        return PEERS_DIR / self.key

    @property
    def requirements(self) -> Path:
        return self.folder / "requirements.txt"

    @property
    def adapter(self) -> Path:
        return self.folder / "adapter.py"

    def explanations(self) -> dict[str, dict[str, str]]:
        """``rules.<rule id>`` and ``failures.<scenario id>`` -> ``behaviour``, ``quote``, ``source``.

        The kit names the rules each failure breaks; a rule explained once explains every failure
        that breaks it, and a scenario entry explains a failure that names no rule.
        """
        data = tomllib.loads((self.folder / "explanations.toml").read_text())
        found: dict[str, dict[str, str]] = {}
        for table in ("rules", "failures"):
            for name, entry in data.get(table, {}).items():
                missing = [f for f in ("behaviour", "quote", "source") if not entry.get(f)]
                if missing:
                    raise PeersError(f"{self.key}/explanations.toml: [{table}.{name}] lacks {missing}")
                found[f"{table}.{name}"] = entry
        return found

    def served_by(self) -> dict[str, str]:
        """Concern -> which library API or which glue function serves it."""
        return dict(tomllib.loads((self.folder / "explanations.toml").read_text()).get("served", {}))


LIBRARIES = (
    Library("langchain", "LangChain"),
    Library("llamaindex", "LlamaIndex"),
    Library("haystack", "Haystack"),
)


# -- venvs -------------------------------------------------------------------------------------------


def cache_dir() -> Path:
    return Path(os.environ.get("RQS_PEERS_CACHE", "~/.cache/rag-conformance/peers")).expanduser()


@contextmanager
def _locked(path: Path) -> Iterator[None]:
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)  # two runs building the same venv wait for each other
        yield


def _uv(cache: Path) -> Path | None:
    """uv from the cache, installed there once with pip; None when it cannot be had."""
    tool = cache / "uv-tool"
    uv = tool / "bin" / "uv"
    with _locked(cache / "uv-tool.lock"):
        if uv.exists():
            return uv
        shutil.rmtree(tool, ignore_errors=True)
        try:
            subprocess.run([sys.executable, "-m", "venv", str(tool)], check=True, capture_output=True)
            subprocess.run(
                [str(tool / "bin" / "python"), "-m", "pip", "install", "-q", "uv"],
                check=True,
                capture_output=True,
            )
        except subprocess.CalledProcessError:
            shutil.rmtree(tool, ignore_errors=True)
            return None
        return uv if uv.exists() else None


def ensure_venv(library: Library, cache: Path | None = None) -> Path:
    """The Python of ``library``'s venv, built first if this requirements file has none yet."""
    cache = cache or cache_dir()
    digest = hashlib.sha256(library.requirements.read_bytes()).hexdigest()[:16]
    venv = cache / f"{library.key}-{digest}"
    python = venv / "bin" / "python"
    ready = venv / ".ready"
    with _locked(cache / f"{library.key}-{digest}.lock"):
        if ready.exists():
            return python
        shutil.rmtree(venv, ignore_errors=True)  # a half-built venv from an interrupted build
        uv = _uv(cache)
        if uv is not None:
            steps = [
                [str(uv), "venv", "-q", "--python", sys.executable, str(venv)],
                [str(uv), "pip", "install", "-q", "--python", str(python), "-r", str(library.requirements)],
            ]
        else:
            steps = [
                [sys.executable, "-m", "venv", str(venv)],
                [str(python), "-m", "pip", "install", "-q", "-r", str(library.requirements)],
            ]
        for step in steps:
            done = subprocess.run(step, capture_output=True, text=True)
            if done.returncode != 0:
                shutil.rmtree(venv, ignore_errors=True)
                raise PeersError(
                    f"cannot build the {library.key} venv ({' '.join(step[:3])}...): "
                    f"{done.stderr.strip()[-800:]}"
                )
        ready.write_text(library.requirements.read_text())
    return python


# -- runs --------------------------------------------------------------------------------------------


def adapter_command(library: Library, python: Path) -> str:
    return f"{python} {library.adapter}"


def run_kit(adapters: Mapping[str, str], out: Path, *, milvus: str, seed: int = SEED) -> dict[str, Path]:
    """Run the kit on every adapter at once (one process each) and return each report's path.

    ``adapters`` maps a column name to ``reference`` or ``cmd:<command line>``.
    """
    processes = {}
    for column, adapter in adapters.items():
        report = out / column
        shutil.rmtree(report, ignore_errors=True)
        report.mkdir(parents=True)
        command = [
            sys.executable,
            "-m",
            "conformance.commands._cli",
            "run",
            "--milvus",
            milvus,
            "--report",
            str(report),
        ]
        if adapter.startswith("cmd:"):
            command += ["--adapter-cmd", adapter.removeprefix("cmd:"), "--adapter-timeout", "120"]
        else:
            command += ["--adapter", adapter]
        command += ["--", "--rqs-seed", str(seed), "--rqs-profile", PROFILE]
        log = (report / "run.log").open("w")
        processes[column] = (subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT, cwd=REPO), log)
    reports = {}
    for column, (process, log) in processes.items():
        process.wait()
        log.close()
        report = out / column / "report.json"
        if not report.exists():
            tail = (out / column / "run.log").read_text()[-1500:]
            raise PeersError(f"the {column} run wrote no report (exit {process.returncode}):\n{tail}")
        reports[column] = report
    return reports


# -- the matrix --------------------------------------------------------------------------------------


def statuses(report: Mapping[str, Any]) -> dict[str, str]:
    return {s["id"]: s["status"] for s in report["scenarios"]}


def needed_explanations(scenario: Mapping[str, Any]) -> list[str]:
    """The explanation keys a failed scenario needs: one per rule it breaks, or its own id."""
    return [f"rules.{rule}" for rule in scenario.get("rules") or ()] or [f"failures.{scenario['id']}"]


def explanation_problems(library: Library, report: Mapping[str, Any]) -> list[str]:
    """Failures without an explanation, and explanations no failure uses any more."""
    explained = library.explanations()
    where = f"examples/peers/{library.key}/explanations.toml"
    problems, used = [], set()
    for scenario in report["scenarios"]:
        if scenario["status"] not in FAILING:
            continue
        for key in needed_explanations(scenario):
            used.add(key)
            if key not in explained:
                problems.append(
                    f"{library.key}: {scenario['id']} {scenario['status']} without [{key}] in {where}"
                )
    problems += [
        f"{library.key}: no failure uses [{key}] any more: remove it from {where}"
        for key in sorted(explained.keys() - used)
    ]
    return problems


def _column_title(column: str) -> str:
    return next((lib.title for lib in LIBRARIES if lib.key == column), column)


def render(reports: Mapping[str, Mapping[str, Any]]) -> str:
    """``docs/peers.md`` from the reports (columns in the given order; ``reference`` first)."""
    columns = list(reports)
    head = "| " + " | ".join(_column_title(c) for c in columns) + " |"
    rule = "|" + "---|" * len(columns)
    lines = [
        "# Peers: the spec on LangChain, LlamaIndex and Haystack",
        "",
        "Generated by `examples/peers/run` from one run of the kit on each library's adapter "
        "(`examples/peers/`), beside the reference: do not edit by hand. The lines under *Why each "
        "failure* come from `examples/peers/<library>/explanations.toml`. Every run uses Hypothesis "
        f"seed {SEED} and the `{PROFILE}` profile, so property verdicts repeat.",
        "",
        "## Versions",
        "",
        "| column | implementation | version | Milvus |",
        "|---|---|---|---|",
    ]
    for column, report in reports.items():
        env = report["environment"]
        adapter = env.get("adapter") or {}
        lines.append(
            f"| {_column_title(column)} | {adapter.get('name', '?')} | {adapter.get('version', '?')} "
            f"| {(env.get('milvus') or {}).get('version', '?')} |"
        )
    lines += ["", "## Verdicts by requirement", "", "| requirement " + head, "|---" + rule]
    first = next(iter(reports.values()))
    for row in first["requirements"]:
        cells = []
        for report in reports.values():
            match = next(r for r in report["requirements"] if r["requirement_id"] == row["requirement_id"])
            counts = match["summary"]
            bad = counts["failed"] + counts["errored"]
            cells.append(match["verdict"] + (f" ({bad} of {counts['total']})" if bad else ""))
        lines.append(f"| {row['requirement']} | " + " | ".join(cells) + " |")
    totals = [
        f"{r['verdict']}: {r['summary']['passed']} of {r['summary']['total']} passed"
        for r in reports.values()
    ]
    lines += ["| **total** | " + " | ".join(totals) + " |", "", "## Scenarios", "", MATRIX_START]
    lines += ["| scenario " + head, "|---" + rule]
    all_ids = list(dict.fromkeys(s["id"] for report in reports.values() for s in report["scenarios"]))
    table = {column: statuses(report) for column, report in reports.items()}
    for scenario in all_ids:
        cells = [
            SHOWN.get(table[c].get(scenario, "absent"), table[c].get(scenario, "absent")) for c in columns
        ]
        lines.append(f"| `{scenario}` | " + " | ".join(cells) + " |")
    lines += [MATRIX_END, "", "## Who serves what", ""]
    concerns = list(dict.fromkeys(c for lib in LIBRARIES for c in lib.served_by()))
    lines += ["| concern | " + " | ".join(lib.title for lib in LIBRARIES) + " |"]
    lines += ["|---|" + "---|" * len(LIBRARIES)]
    for concern in concerns:
        lines.append(
            f"| {concern} | " + " | ".join(lib.served_by().get(concern, "") for lib in LIBRARIES) + " |"
        )
    lines += ["", "## Why each failure", ""]
    for library in LIBRARIES:
        if library.key not in reports:
            continue
        report = reports[library.key]
        explained = library.explanations()
        failing = [s for s in report["scenarios"] if s["status"] in FAILING]
        lines += [f"### {library.title}", ""]
        if not failing:
            lines += ["No scenario fails.", ""]
            continue
        for scenario in failing:
            keys = needed_explanations(scenario)
            rules = ", ".join(scenario.get("rules") or ()) or "the scenario's own check"
            lines.append(
                f"- `{scenario['id']}` (breaks {rules}): " + " ".join(_because(explained, k) for k in keys)
            )
        used = sorted({k for s in failing for k in needed_explanations(s)})
        lines += ["", "The library behaviours behind those failures:", ""]
        for key in used:
            entry = explained.get(key)
            if entry is None:
                lines.append(f"- `{key}`: **not explained yet**")
                continue
            lines.append(
                f'- `{key}`: {entry["behaviour"]} Quoted from `{entry["source"]}`: "{entry["quote"]}"'
            )
        lines.append("")
    return "\n".join(lines).rstrip() + "\n"


def _because(explained: Mapping[str, Mapping[str, str]], key: str) -> str:
    entry = explained.get(key)
    if entry is None:
        return f"**{key} not explained yet**"
    return f"{entry['behaviour'].split(': ')[0].rstrip('.')} (`{key}`)."


def parse_matrix(markdown: str) -> dict[str, dict[str, str]]:
    """Column title -> scenario id -> status, from the scenario table of a rendered ``peers.md``."""
    match = re.search(re.escape(MATRIX_START) + r"\n(.*?)\n" + re.escape(MATRIX_END), markdown, re.S)
    if match is None:
        raise PeersError(f"no scenario matrix between {MATRIX_START!r} and {MATRIX_END!r}")
    rows = [[cell.strip() for cell in line.strip().strip("|").split("|")] for line in match[1].splitlines()]
    header, body = rows[0], rows[2:]
    matrix: dict[str, dict[str, str]] = {title: {} for title in header[1:]}
    for row in body:
        scenario = row[0].strip("`")
        for title, cell in zip(header[1:], row[1:], strict=True):
            matrix[title][scenario] = cell
    return matrix


def compare(
    documented: Mapping[str, Mapping[str, str]], reports: Mapping[str, Mapping[str, Any]]
) -> list[str]:
    """Every cell of a fresh report that differs from the documented matrix, said plainly."""
    differences = []
    for column, report in reports.items():
        title = _column_title(column)
        if title not in documented:
            differences.append(f"{title}: no such column in docs/peers.md")
            continue
        fresh = {i: SHOWN.get(s, s) for i, s in statuses(report).items()}
        was = documented[title]
        for scenario in sorted(fresh.keys() | was.keys()):
            if fresh.get(scenario, "absent") != was.get(scenario, "absent"):
                differences.append(
                    f"{title}: {scenario} is {fresh.get(scenario, 'absent')}, docs/peers.md says "
                    f"{was.get(scenario, 'absent')}"
                )
    return differences


def load(report: Path) -> dict[str, Any]:
    return json.loads(report.read_text())


def _engine() -> Any:
    from conformance.engines import start_engine

    return start_engine("lite")


def main(argv: Sequence[str] | None = None) -> int:
    import argparse

    parser = argparse.ArgumentParser(prog="examples/peers/run", description=__doc__.splitlines()[0])
    parser.add_argument("--out", default="peers-report", help="reports (one dir per column) and the site")
    parser.add_argument(
        "--check", action="store_true", help="compare with docs/peers.md instead of writing it"
    )
    parser.add_argument(
        "--only",
        default=None,
        help="comma-separated libraries (default: all three); writes reports only, not docs/peers.md",
    )
    args = parser.parse_args(argv)
    wanted = set(args.only.split(",")) if args.only else {lib.key for lib in LIBRARIES}
    libraries = [lib for lib in LIBRARIES if lib.key in wanted]
    out = Path(args.out).resolve()
    adapters = {} if args.check else {REFERENCE: REFERENCE}
    for library in libraries:
        print(f"venv for {library.key}: ", end="", flush=True)
        adapters[library.key] = "cmd:" + adapter_command(library, ensure_venv(library))
        print("ready", flush=True)
    with _engine() as engine:  # one Milvus Lite server for every run; each run has its own prefix
        paths = run_kit(adapters, out / "reports", milvus=f"uri:{engine.endpoint.uri}")
    reports = {column: load(path) for column, path in paths.items()}
    problems = [p for lib in libraries for p in explanation_problems(lib, reports[lib.key])]
    if args.check:
        problems += compare(parse_matrix(PEERS_MD.read_text()), reports)
    elif args.only:  # docs/peers.md covers every library: a partial run must not shrink it
        print(f"partial run (--only): {PEERS_MD} left as it was; reports in {out / 'reports'}")
    else:
        PEERS_MD.parent.mkdir(parents=True, exist_ok=True)
        PEERS_MD.write_text(render(reports))
        print(f"wrote {PEERS_MD}")
        site = subprocess.run(
            [sys.executable, "-m", "conformance.commands._cli", "docs", "--out", str(out / "site")]
            + [arg for path in paths.values() for arg in ("--results", str(path))],
            cwd=REPO,
        )
        if site.returncode != 0:
            problems.append("rag-conformance docs failed; see above")
    for problem in problems:
        print(f"problem: {problem}", file=sys.stderr)
    return 1 if problems else 0

"""The figures of ``rag-reference evaluate`` and ``rag-conformance upgrade`` on the bundled set.

What a user reads off either command's output, reduced to values two runs can be compared on: every
metric and gate figure, the per-query metrics, and the TREC files (their SHA-256; the qrels as a set
of lines, since only their order may differ). ``tests/data/figures_<commit>.json`` holds these figures
as computed by the kit at that commit, by running
``python -m tests.integration.evaluation._figures REF_OUT UPGRADE_OUT COMMIT`` on the outputs of
``rag-reference evaluate --out REF_OUT`` and
``rag-conformance upgrade --from lite --to lite --no-suite --out UPGRADE_OUT`` at that commit.
"""

from __future__ import annotations

import hashlib
import json
import sys
from pathlib import Path
from typing import Any

__all__ = ["evaluate_figures", "upgrade_figures"]


def _sha(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _sha_of_lines(path: Path) -> str:
    lines = sorted(path.read_text(encoding="utf-8").splitlines())
    return hashlib.sha256("\n".join(lines).encode()).hexdigest()


def evaluate_figures(out: Path) -> dict[str, Any]:
    """The figures of ``rag-reference evaluate``'s output folder ``out``."""
    data = json.loads((out / "evaluation.json").read_text(encoding="utf-8"))
    run, summary = data["run"], data["summary"]
    return {
        "ranking": {f"{r['mode']}/{r['group']}": [r["queries"], r["metrics"]] for r in summary["ranking"]},
        "gates": {g["mode"]: g for g in summary["gates"]},
        "retry": {r["mode"]: r for r in summary["retry"]},
        "levels": summary["levels"],
        "label_check": summary["labelCheck"],
        "misses": summary["misses"],
        "per_query": {
            mode: {o["id"]: o["modes"][mode]["metrics"] for o in run["outcomes"]} for mode in run["modes"]
        },
        "files": {
            "dense.run": _sha(out / "dense.run"),
            "hybrid.run": _sha(out / "hybrid.run"),
            "qrels.txt (lines)": _sha_of_lines(out / "qrels.txt"),
        },
    }


def upgrade_figures(out: Path) -> dict[str, Any]:
    """The figures of ``rag-conformance upgrade``'s output folder ``out`` (latency left out: it is timed)."""
    data = json.loads((out / "upgrade.json").read_text(encoding="utf-8"))
    runs = out / "runs"
    return {
        "verdict": data["verdict"],
        "queries": data["queries"],
        "answerable": data["answerable"],
        "metrics": {f"{m['mode']}/{m['metric']}": m for m in data["metrics"]},
        "gates": {f"{g['mode']}/{g['gate']}": g for g in data["gates"]},
        "movers": data["movers"],
        "top_quality": data["top_quality"],
        "deltas": data["deltas"],
        "files": {
            **{p.name: _sha(p) for p in sorted(runs.glob("*.run"))},
            "qrels.txt (lines)": _sha_of_lines(runs / "qrels.txt"),
        },
    }


if __name__ == "__main__":
    figures = {
        "commit": sys.argv[3],
        "evaluate": evaluate_figures(Path(sys.argv[1])),
        "upgrade": upgrade_figures(Path(sys.argv[2])),
    }
    print(json.dumps(figures, indent=1, sort_keys=True))

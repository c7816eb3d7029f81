"""Figure 5 (peers): LangChain's, LlamaIndex's and Haystack's hybrid query beside a bare ``hybrid_search``.

Each library runs in its own venv, the one ``examples/peers/run`` builds from the library's pinned
``requirements.txt`` (``examples/peers/peers_tool.py``'s ``ensure_venv``, same cache). For every
library, :mod:`benchmarks.children.peer_child` runs in that venv against the engine the reference was just
measured on, ingests the same corpus through the library's adapter, and times the library's hybrid
query interleaved with a bare ``hybrid_search`` from the same process (see that module). A venv that
cannot be built (no network, no index) or a child that fails gives the library a row saying why; the
rest of the run goes on.
"""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np

from benchmarks.figures.retrieval.corpus import CHUNKS_PER_DOC, BenchCorpus, Query
from benchmarks.instruments.progress import say

__all__ = ["LIBRARIES", "REFERENCE_REQUEST", "run_peers", "summarize_peer"]

ROOT = Path(__file__).resolve().parents[3]
CHILD = ROOT / "benchmarks" / "children" / "peer_child.py"
LIBRARIES = ("langchain", "llamaindex", "haystack")
# What the reference sends (reference/store/_store.py), for the note on what each peer's request lacks.
REFERENCE_REQUEST = {"ranker": "RRFRanker", "rrf_k": 60, "output_vectors": True}
_CHILD_TIMEOUT_S = 3 * 3600


def _peers_tool() -> Any:
    """``examples/peers/peers_tool.py``, loaded by path (it is a script folder, not a package)."""
    path = ROOT / "examples" / "peers" / "peers_tool.py"
    spec = importlib.util.spec_from_file_location("_rqs_peers_tool", path)
    if spec is None or spec.loader is None:
        raise RuntimeError(f"cannot load {path}")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # its dataclasses look their module up there
    spec.loader.exec_module(module)
    return module


def _write_inputs(folder: Path, corpus: BenchCorpus, queries: list[Query]) -> None:
    np.save(folder / "vectors.npy", np.ascontiguousarray(corpus.vectors, dtype=np.float32))
    with (folder / "chunks.jsonl").open("w", encoding="utf-8") as out:
        for row, text in enumerate(corpus.texts):
            chunk = {
                "docId": corpus.doc_id(row),
                "chunkIndex": row % CHUNKS_PER_DOC,
                "text": text,
                "category": corpus.categories[row],
                "sourceType": corpus.source_types[row],
            }
            out.write(json.dumps(chunk, ensure_ascii=False) + "\n")
    asked = [{"text": q.text, "vector": list(q.vector)} for q in queries]
    (folder / "queries.json").write_text(json.dumps(asked), encoding="utf-8")


def summarize_peer(child: dict[str, Any]) -> dict[str, Any]:
    """The child's raw times as p50s, the peer / bare ratios and CPU per call, in ms."""
    peer, bare = np.asarray(child["wall_s"]["peer"]), np.asarray(child["wall_s"]["bare"])
    n = len(peer)
    request = child["request"]
    return {
        "library": child["library"],
        "versions": child["versions"],
        "n": n,
        "ingest_seconds": child.get("ingest_seconds"),
        "peer_p50_ms": round(float(np.percentile(peer, 50)) * 1e3, 3),
        "bare_p50_ms": round(float(np.percentile(bare, 50)) * 1e3, 3),
        "peer_vs_bare": {
            "p50": round(float(np.percentile(peer, 50) / np.percentile(bare, 50)), 4),
            "p95": round(float(np.percentile(peer, 95) / np.percentile(bare, 95)), 4),
            "paired_median": round(float(np.median(peer / bare)), 4),
        },
        "client_cpu_ms": {name: round(child["client_cpu_s"][name] / n * 1e3, 3) for name in ("peer", "bare")},
        "request": request,
        "differs": request_differences(request),
    }


def request_differences(request: dict[str, Any]) -> list[str]:
    """How a peer's recorded request differs from the reference's: ranker, RRF k, output vectors."""
    found = []
    if request.get("ranker") != REFERENCE_REQUEST["ranker"]:
        found.append(f"ranker {request.get('ranker')}, not RRFRanker")
    params = json.dumps(request.get("ranker_params"))
    if '"k": 60' not in params and "'k': 60" not in params:
        found.append(f"RRF k not 60 ({params})")
    outputs = request.get("output_fields") or []
    vectors = {s["anns_field"] for s in request.get("sub_requests", []) if s.get("data") == "vector"}
    # What the reply held, where the child saw one; else what was asked for ("*": every field).
    returned = request.get("reply_fields")
    has_vectors = (
        bool(vectors & set(returned))
        if returned is not None
        else bool(vectors & set(outputs) or "*" in outputs)
    )
    if not has_vectors:
        asked = ", ".join(outputs) or "default fields"
        found.append(
            f"no dense vector in the reply (output fields: {asked}): it cannot compute a denseDistance "
            "per hit, and its reply is smaller than the reference's"
        )
    return found


def run_peers(
    uri: str,
    prefix: str,
    corpus: BenchCorpus,
    queries: list[Query],
    *,
    size: int,
    k: int,
    rrf_k: int,
    warmup: int,
    libraries: list[str],
) -> list[dict[str, Any]]:
    """Every library's row: its timing, or ``{"library": ..., "not_run": why}``."""
    try:
        tool = _peers_tool()
    except Exception as exc:
        return [{"library": name, "not_run": f"examples/peers/peers_tool.py: {exc}"} for name in libraries]
    known = {library.key: library for library in tool.LIBRARIES}
    rows: list[dict[str, Any]] = []
    with tempfile.TemporaryDirectory(prefix="rqs-peers-") as tmp:
        folder = Path(tmp)
        _write_inputs(folder, corpus, queries)
        for name in libraries:
            tag = f"[peer {name} {size:,}]"
            if name not in known:
                rows.append({"library": name, "not_run": f"unknown; known: {', '.join(known)}"})
                continue
            try:
                python = tool.ensure_venv(known[name])
            except tool.PeersError as exc:
                why = f"its venv cannot be built here (no network?): {str(exc).splitlines()[0][:300]}"
                say(f"{tag} skipped: {why}")
                rows.append({"library": name, "not_run": why})
                continue
            job = folder / f"{name}.json"
            job.write_text(
                json.dumps(
                    {
                        "library": name,
                        "uri": uri,
                        "prefix": f"{prefix}peer_",
                        "name": f"bench{size}",
                        "corpus_dir": str(folder),
                        "queries": str(folder / "queries.json"),
                        "k": k,
                        "rrf_k": rrf_k,
                        "warmup": warmup,
                    }
                ),
                encoding="utf-8",
            )
            say(f"{tag} ingest through the library, then {len(queries)} queries x2 (its venv: {python})")
            started = time.perf_counter()
            try:
                done = subprocess.run(
                    [str(python), str(CHILD), str(job)],
                    capture_output=True,
                    text=True,
                    timeout=_CHILD_TIMEOUT_S,
                    cwd=ROOT,
                )
            except subprocess.TimeoutExpired:
                rows.append({"library": name, "not_run": f"no answer in {_CHILD_TIMEOUT_S} s"})
                continue
            if done.returncode != 0 or not done.stdout.strip():
                tail = done.stderr.strip().splitlines()[-1:] or ["no output"]
                why = f"the timing run failed (exit {done.returncode}): {tail[0][:300]}"
                say(f"{tag} {why}")
                rows.append({"library": name, "not_run": why})
                continue
            row = summarize_peer(json.loads(done.stdout.strip().splitlines()[-1]))
            row["seconds"] = round(time.perf_counter() - started, 1)
            say(f"{tag} peer / bare p50 {row['peer_vs_bare']['p50']:.3f}x in {row['seconds']:.0f} s")
            rows.append(row)
    return rows

"""The peer adapters (LangChain, LlamaIndex, Haystack) and the matrix in ``docs/peers.md``.

The unit tests check the glue and the matrix tooling on made-up data. The last test runs the three
adapters through the kit, each in its library's venv (built once into ``$RQS_PEERS_CACHE``, by default
``~/.cache/rag-conformance/peers``, from the pinned requirements), and checks every verdict against
``docs/peers.md``: a library upgrade or a kit change that moves a verdict fails here, naming the cell.
"""

from __future__ import annotations

import copy
import glob
import io
import json
import sys
from pathlib import Path
from typing import Any

import pytest

PEERS = Path(__file__).resolve().parents[3] / "examples" / "peers"
sys.path.insert(0, str(PEERS))

import _glue  # noqa: E402
import _stdio  # noqa: E402
import peers_tool  # noqa: E402


class _Peer(_glue.Peer):
    """A peer whose searches answer from a table: (mode, category) -> hits."""

    def __init__(self, answers: dict[tuple[str, str | None], list[dict[str, Any]]]) -> None:
        self.answers = answers
        self.asked: list[str | None] = []

    def search(self, request: dict[str, Any]) -> list[dict[str, Any]]:
        self.asked.append(request["category"])
        return self.answers[(request["mode"], request["category"])]


def _hit(doc: str, rank: int, score: float, label: str = "dense", chunk: int = 0) -> dict[str, Any]:
    return {"docId": doc, "chunkIndex": chunk, "originalRank": rank, "score": score, "scoreLabel": label}


def test_unknown_labels_are_a_glue_error_naming_the_label() -> None:
    assert _glue.canonical_label("rrf_fused") == "hybrid"
    with pytest.raises(_glue.GlueError, match="'RRF'"):
        _glue.canonical_label("RRF")


def test_rank_quality_maps_rank_one_to_one_and_never_increases() -> None:
    qualities = [_glue.rank_quality(rank, 7) for rank in range(1, 8)]
    assert qualities[0] == 1.0
    assert qualities == sorted(qualities, reverse=True)
    with pytest.raises(_glue.GlueError, match="batch size 0"):
        _glue.rank_quality(1, 0)


def test_post_process_keeps_rank_order_dedups_and_caps() -> None:
    candidates = [_hit("A", 3, 0.4, chunk=1), _hit("B", 2, 0.3), _hit("A", 1, 0.2), _hit("A", 4, 0.2)]
    config = {"maxChunksPerDocument": 1, "returnN": 5}
    reply = _glue.post_process(_Peer({}), {"candidates": candidates, "config": config})
    assert [b["evidenceKey"] for b in reply["blocks"]] == ["A#0", "B#0"]
    assert [(d["evidenceKey"], d["reason"]) for d in reply["dropped"]] == [
        ("A#1", "per_document_cap"),
        ("A#0", "duplicate"),
    ]
    assert reply["topQualityScore"] == pytest.approx(0.9)  # the spec's formula: 1 - 0.2 / 2
    assert reply["isLowQuality"] is False


def test_a_library_gate_overrides_the_glue_gate() -> None:
    class Gated(_Peer):
        def library_gate(self, blocks: Any, threshold: float) -> bool | None:
            return True

    reply = _glue.post_process(Gated({}), {"candidates": [_hit("A", 1, 0.0)]})
    assert reply["topQualityScore"] == 1.0
    assert reply["isLowQuality"] is True


def test_lookup_retries_without_the_category_only_when_the_filtered_result_is_low_quality() -> None:
    peer = _Peer({("dense", "billing"): [_hit("bill", 1, 1.5)], ("dense", None): [_hit("snap", 1, 0.1)]})
    reply = _glue.lookup(
        peer, {"queryText": "q", "queryVector": [1.0], "mode": "dense", "category": "billing"}
    )
    assert (reply["path"], peer.asked) == ("unfiltered_retry", ["billing", None])
    assert [b["docId"] for b in reply["blocks"]] == ["snap"]
    peer = _Peer({("dense", "storage"): [_hit("snap", 1, 0.1)]})
    reply = _glue.lookup(
        peer, {"queryText": "q", "queryVector": [1.0], "mode": "dense", "category": "storage"}
    )
    assert (reply["path"], peer.asked) == ("filtered", ["storage"])


def test_the_stdio_loop_answers_errors_and_keeps_library_prints_off_stdout(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    class Chatty(_Peer):
        closed = False

        def search(self, request: dict[str, Any]) -> list[dict[str, Any]]:
            print("library log line")
            return [{**_hit("A", 1, 0.1), "_quality": 0.9}]

        def close(self) -> None:
            Chatty.closed = True

    lines = [
        {"type": "search", "seq": 1, "request": {"mode": "dense", "category": None}},
        {"type": "canonicalize_label", "seq": 2, "label": "cosine"},
        {"type": "stop", "seq": 3},
    ]
    monkeypatch.setattr(sys, "stdin", io.StringIO("".join(json.dumps(m) + "\n" for m in lines)))
    _stdio.serve(Chatty({}))
    out, err = capsys.readouterr()
    replies = [json.loads(line) for line in out.splitlines()]
    assert replies[0] == {"seq": 1, "result": {"hits": [_hit("A", 1, 0.1)]}}  # _quality stays home
    assert replies[1]["error"]["kind"] == "GlueError"
    assert "'cosine'" in replies[1]["error"]["message"]
    assert replies[2] == {"seq": 3, "result": None}
    assert "library log line" in err
    assert Chatty.closed


def _report(
    statuses: dict[str, str], name: str = "x", rules: dict[str, list[str]] | None = None
) -> dict[str, Any]:
    scenarios = [
        {"id": i, "status": s, "requirement": "R", "requirement_id": "r", "rules": (rules or {}).get(i, [])}
        for i, s in statuses.items()
    ]
    failed = sum(s == "failed" for s in statuses.values())
    summary = {"passed": len(statuses) - failed, "failed": failed, "errored": 0, "total": len(statuses)}
    verdict = "DOES NOT CONFORM" if failed else "CONFORMS"
    return {
        "scenarios": scenarios,
        "summary": summary,
        "verdict": verdict,
        "requirements": [{"requirement": "R", "requirement_id": "r", "summary": summary, "verdict": verdict}],
        "environment": {"adapter": {"name": name, "version": "1"}, "milvus": {"version": "lite"}},
    }


def _failing(library: peers_tool.Library) -> tuple[dict[str, str], dict[str, list[str]]]:
    """One failing scenario per explanation: breaking the explained rule, or the explained scenario."""
    statuses, rules = {}, {}
    for key in library.explanations():
        table, _, name = key.partition(".")
        scenario = f"fails-{name}" if table == "rules" else name
        statuses[scenario] = "failed"
        if table == "rules":
            rules[scenario] = [name]
    return statuses, rules


def _fake_reports() -> dict[str, dict[str, Any]]:
    reports = {"reference": _report({"s1": "passed", "s2": "passed"})}
    for library in peers_tool.LIBRARIES:
        failing, rules = _failing(library)
        reports[library.key] = _report(
            {"s1": "passed", "s2": "not_applicable", **failing}, library.key, rules
        )
    return reports


def test_the_rendered_matrix_reads_back_and_a_changed_cell_is_named() -> None:
    reports = _fake_reports()
    documented = peers_tool.parse_matrix(peers_tool.render(reports))
    assert documented["LangChain"]["s2"] == "n/a"
    assert not peers_tool.compare(documented, reports)
    changed = copy.deepcopy(reports)
    changed["haystack"]["scenarios"][0]["status"] = "failed"
    assert peers_tool.compare(documented, changed) == ["Haystack: s1 is FAILED, docs/peers.md says passed"]


def test_unexplained_failures_and_stale_explanations_are_problems() -> None:
    library = peers_tool.LIBRARIES[0]  # LangChain: explains rules dense-formula and quality-range
    where = "examples/peers/langchain/explanations.toml"
    report = _report(
        {"new-rule": "failed", "no-rule": "failed", "formula": "failed"},
        rules={"new-rule": ["low-quality"], "formula": ["dense-formula"]},
    )
    assert peers_tool.explanation_problems(library, report) == [
        f"langchain: new-rule failed without [rules.low-quality] in {where}",
        f"langchain: no-rule failed without [failures.no-rule] in {where}",
        f"langchain: no failure uses [rules.quality-range] any more: remove it from {where}",
    ]


def test_every_failure_in_docs_peers_md_is_explained() -> None:
    text = peers_tool.PEERS_MD.read_text()
    assert "not explained yet" not in text


def _site_packages(python: Path) -> Path:
    found = glob.glob(str(python.parent.parent / "lib" / "python*" / "site-packages"))
    assert found, f"no site-packages beside {python}"
    return Path(found[0])


def test_the_three_libraries_still_give_the_documented_verdicts(tmp_path: Path) -> None:
    """Slow: builds the venvs on a cold cache (about 50 s with uv), then three kit runs at once (3 min)."""
    adapters = {}
    for library in peers_tool.LIBRARIES:
        try:
            python = peers_tool.ensure_venv(library)
        except peers_tool.PeersError as exc:
            pytest.skip(f"cannot build the {library.key} venv from the package index: {exc}")
        for scenario, entry in library.explanations().items():  # quotes are the library's own words
            source = _site_packages(python) / entry["source"].split(",")[0]
            assert entry["quote"] in source.read_text(), f"{library.key} {scenario}: quote not in {source}"
        adapters[library.key] = "cmd:" + peers_tool.adapter_command(library, python)
    with peers_tool._engine() as engine:
        paths = peers_tool.run_kit(adapters, tmp_path, milvus=f"uri:{engine.endpoint.uri}")
    reports = {column: peers_tool.load(path) for column, path in paths.items()}
    problems = [
        p for lib in peers_tool.LIBRARIES for p in peers_tool.explanation_problems(lib, reports[lib.key])
    ]
    problems += peers_tool.compare(peers_tool.parse_matrix(peers_tool.PEERS_MD.read_text()), reports)
    assert not problems, "\n".join(problems) + "\nregenerate with examples/peers/run, explain what changed"

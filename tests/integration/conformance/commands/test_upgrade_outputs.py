"""``rag-conformance upgrade``'s outputs end to end (issue 42 items 5 and 6, issue 45's upgrade part):
a full disk keeps the earlier report and is NOT JUDGED in one line; a token an adapter echoes into its
evidence keys reaches no file; ids trec_eval could not split are encoded; the terminal shows control
characters instead of sending them and its verdict line names what was not compared; the progress
bar covers the suite and no phase line is printed over it; the suite leaves no Hypothesis files in
the report folder; a typo in ``--to`` or an ``--out`` that is a file is refused before anything runs.

Few queries (``--limit 4``), Lite on both sides, and the suite only where it is the point.
"""

from __future__ import annotations

import errno
import fcntl
import json
import os
import pty
import re
import struct
import subprocess
import termios
from pathlib import Path

import ir_measures
import pytest
from markdown_it import MarkdownIt

from conformance.adapters.reference import ReferenceAdapter
from conformance.boundary import _atomic
from conformance.boundary._protocol import Block, Corpus, LookupReply, LookupRequest, MilvusEndpoint
from conformance.commands._cli import main

from .test_cli_exit_codes import CLI

QUICK = ["--no-suite", "--limit", "4", "--no-plots", "--no-progress"]
TOKEN = "Tok3n-echoed-9f2c"


def _upgrade(out: Path, *extra: str, adapter: str | None = None) -> int:
    chosen = ["--adapter", adapter] if adapter else []
    return main(["upgrade", "--from", "lite", "--to", "lite", *chosen, *QUICK, "--out", str(out), *extra])


def _files(out: Path) -> dict[Path, bytes]:
    return {p: p.read_bytes() for p in sorted(out.rglob("*")) if p.is_file()}


# -- a full disk -------------------------------------------------------------------------------------------


def test_a_full_disk_keeps_the_earlier_upgrade_report_and_is_not_judged(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "disk" / "up"
    assert _upgrade(out) == 0
    before = _files(out)
    assert {p.name for p in before} >= {
        "upgrade.json",
        "upgrade.md",
        "latency.csv",
        "qrels.txt",
        "new-dense.run",
    }
    capsys.readouterr()
    full = str(out.resolve())
    real_fsync = os.fsync

    def fsync_on_a_full_disk(fd: int) -> None:  # as a tmpfs that fills up during the check fails its writes
        path = os.readlink(f"/proc/self/fd/{fd}")
        # The write probe at the start passes: the disk fills up while the check runs.
        if path.startswith(full) and ".rqs-write-probe-" not in path:
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        real_fsync(fd)

    monkeypatch.setattr(_atomic.os, "fsync", fsync_on_a_full_disk)
    code = _upgrade(out, "--seed", "3")
    monkeypatch.undo()
    captured = capsys.readouterr()
    assert code == 2, captured
    assert "Traceback" not in captured.err
    [line] = [line for line in captured.err.splitlines() if "ENOSPC" in line]  # one line, no traceback
    assert str(out / "upgrade.json") in line
    assert "verdict: NOT JUDGED" in captured.out
    assert _files(out) == before  # every earlier file whole, runs included; no temporary file left


# -- secrets and ids in the run files ------------------------------------------------------------------------


class EchoesItsToken(ReferenceAdapter):
    """The reference, with two more blocks per answer: its token in a key, and a key with a space."""

    def lookup(self, request: LookupRequest) -> LookupReply:
        reply = super().lookup(request)
        extra = [
            Block(
                evidence_key=key,
                doc_id=key.split("#")[0],
                chunk_index=0,
                original_rank=len(reply.blocks) + i,
                quality_score=0.1,
                score_label="WEAK",
            )
            for i, key in enumerate((f"seen-{os.environ['MILVUS_TOKEN']}#0", "not in the set#0"))
        ]
        return reply.model_copy(update={"blocks": (*reply.blocks, *extra)})


def test_a_token_the_adapter_echoes_into_evidence_keys_reaches_no_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("MILVUS_TOKEN", TOKEN)
    out = tmp_path / "echo"
    code = _upgrade(out, adapter=f"{__name__}:EchoesItsToken")
    assert code == 0
    leaked = [p for p, data in _files(out).items() if TOKEN.encode() in data]
    assert leaked == []
    run = out / "runs" / "new-hybrid.run"
    assert all(len(line.split()) == 6 for line in run.read_text().splitlines())  # what trec_eval reads
    docs = {r.doc_id for r in ir_measures.read_trec_run(str(run))}
    assert {"seen-***#0", "not%20in%20the%20set#0"} <= docs
    measured = ir_measures.calc_aggregate(
        [ir_measures.nDCG @ 10],
        list(ir_measures.read_trec_qrels(str(out / "runs" / "qrels.txt"))),
        list(ir_measures.read_trec_run(str(run))),
    )
    assert 0 < measured[ir_measures.nDCG @ 10] <= 1


# -- the terminal --------------------------------------------------------------------------------------------


class FailsLoudlyOnTheSecondEngine(ReferenceAdapter):
    """Cannot hold its corpus on the second engine, and says so with terminal escapes in its words."""

    prepared = 0

    def prepare(self, endpoint: MilvusEndpoint, corpus: Corpus) -> None:
        type(self).prepared += 1
        if type(self).prepared == 2:
            raise RuntimeError("\x1b]0;owned\x07\x1b[2Jschema refused")
        super().prepare(endpoint, corpus)


def test_the_terminal_shows_control_characters_and_the_verdict_line_names_what_was_not_compared(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    FailsLoudlyOnTheSecondEngine.prepared = 0
    code = _upgrade(tmp_path / "loud", adapter=f"{__name__}:FailsLoudlyOnTheSecondEngine")
    shown = capsys.readouterr()
    assert code == 1
    assert "\x1b" not in shown.out + shown.err
    assert "\x07" not in shown.out + shown.err
    assert "\\x1b]0;owned\\x07\\x1b[2Jschema refused" in shown.out
    verdict = shown.out.strip().splitlines()[-1]
    assert verdict.startswith("verdict: REGRESSES (old lite -> new lite); exit code 1; not compared: 1 (")
    assert "conformance suite and engine checks: skipped (--no-suite)" in verdict
    page = (tmp_path / "loud" / "upgrade.md").read_text()
    assert "\x1b" not in page
    rendered = MarkdownIt("commonmark").render(page)  # a reader sees the escapes, written once
    assert "prepare failed: RuntimeError: \\x1b]0;owned\\x07\\x1b[2Jschema refused" in rendered


# -- refused before anything runs -----------------------------------------------------------------------


def test_a_typo_in_to_or_an_out_that_is_a_file_is_refused_before_any_engine_starts(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "typo"
    assert main(["upgrade", "--from", "lite", "--to", "lietx", "--out", str(out)]) == 2
    err = capsys.readouterr().err
    assert "unknown backend 'lietx'" in err
    assert all(name in err for name in ("lite-2.5.1", "milvus-2.3.5"))  # the engines the kit installs
    assert not out.exists()  # no suite ran on the old engine first
    (tmp_path / "a-file").write_text("")
    assert main(["upgrade", "--from", "lite", "--to", "lite", "--out", str(tmp_path / "a-file")]) == 2
    assert "is a file, not a directory" in capsys.readouterr().err


# -- the progress bar and the suite's leftovers --------------------------------------------------------------


def _on_a_terminal(*args: str, cwd: Path) -> tuple[int, str]:
    """Run the CLI with stderr on a 100-column pseudo-terminal (where tqdm draws); its stderr, raw."""
    master, slave = pty.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 40, 100, 0, 0))
    env = {k: v for k, v in os.environ.items() if k not in ("PYTEST_ADDOPTS", "PYTEST_PLUGINS")}
    child = subprocess.Popen(
        [str(CLI), *args], cwd=cwd, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=slave, env=env
    )
    os.close(slave)
    chunks = []
    while True:
        try:
            data = os.read(master, 65536)
        except OSError:  # the child closed the terminal
            break
        if not data:
            break
        chunks.append(data)
    os.close(master)
    return child.wait(timeout=600), b"".join(chunks).decode(errors="replace")


def test_the_progress_bar_covers_the_suite_and_phase_lines_print_above_it_and_no_hypothesis_files(
    tmp_path: Path,
) -> None:
    if not CLI.exists():
        pytest.skip(f"the rag-conformance script is not installed beside this Python ({CLI})")
    code, raw = _on_a_terminal(
        "upgrade",
        "--from",
        "lite",
        "--to",
        "lite",
        "--limit",
        "4",
        "--no-plots",
        "--out",
        "up",
        "-k",
        "prop-rank-mapping-monotone-for-any-batch-size",
        cwd=tmp_path,
    )
    assert code == 0, raw
    assert re.search(r"upgrade: suite: 100%.*2/2", raw), raw
    # 4 queries x 2 modes x 4 sides (old, new and the twin of each, which time the instance effect)
    assert re.search(r"upgrade: lookups: 100%.*32/32", raw), raw
    # A line printed while a bar is drawn starts a line of its own (tqdm's write clears the bar first).
    segments = re.split(r"[\r\n]", raw)
    phases = [
        s for s in segments if re.search(r"\[lite\] (starting|CONFORMS)|upgrade: (embedding|starting)", s)
    ]
    assert len(phases) >= 6, raw
    assert all(re.match(r"(\[lite\]|upgrade: (embedding|starting))", s) for s in phases), phases
    report = json.loads((tmp_path / "up" / "upgrade.json").read_text())
    assert report["suite"]["compared"], report["suite"]
    assert not [p for p in (tmp_path / "up").rglob("*") if ".hypothesis" in p.parts]

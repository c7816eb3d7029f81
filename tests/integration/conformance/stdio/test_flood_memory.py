"""Bytes, not lines (issue 53.4): what the kit keeps of a child's flood is bounded in bytes.

Each case runs the kit's side in a process of its own (so its peak resident set is the kit's alone, read
from ``/proc/self/status``, VmHWM) against a program that floods a stream, and compares the peak with the
same run against a quiet program. Memory, not time, is measured: the machine's load changes only how long the
flood takes to drain.
"""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

MB = 1024 * 1024
# The bound for a 600 MB stderr flood, and what a flood may add to the quiet run's peak: the
# kit keeps 4 KiB per stderr line and reads 64 KiB at a time; 16 MiB of unread stdout at most.
KIT_PEAK_LIMIT = 300 * MB
FLOOD_EXTRA_LIMIT = 40 * MB

PROGRAM = textwrap.dedent(
    """\
    import json, sys
    FLOOD = sys.argv[1]
    piece = b"x" * 65536
    def flood(stream, lines, size, ending=b"\\n"):
        for _ in range(lines):
            for _ in range(size // len(piece)):
                stream.write(piece)
            stream.write(ending)
        stream.flush()
    for line in sys.stdin:
        m = json.loads(line)
        out = {"seq": m["seq"], "result": None}
        if m["type"] == "start":
            out["result"] = {"name": "flood", "version": "1", "capabilities": ["quality", "post_process"]}
            if FLOOD == "between-calls":  # 64 MB of 1 KiB log lines after the handshake, unasked
                sys.stdout.write(json.dumps(out) + "\\n")
                sys.stdout.flush()
                flood(sys.stdout.buffer, 65536, 1024)
                continue
        elif m["type"] == "quality_score":
            if FLOOD == "stderr":  # the issue's case: 3 x 200 MB lines on stderr
                flood(sys.stderr.buffer, 3, 200 * 1024 * 1024)
            elif FLOOD == "stdout-line":  # one 300 MB line on stdout: no reply is that long
                flood(sys.stdout.buffer, 1, 300 * 1024 * 1024)
            elif FLOOD == "stdout-lines":  # 200 MB of 64 KiB log lines on stdout, then the reply
                flood(sys.stdout.buffer, 3200, 65536)
            out["result"] = 0.5
        sys.stdout.write(json.dumps(out) + "\\n")
        sys.stdout.flush()
        if m["type"] == "stop":
            break
    """
)

KIT_SIDE = textwrap.dedent(
    """\
    import json, sys
    from conformance.boundary._protocol import PostProcessRequest, QualityRequest, WireCandidate
    from conformance.stdio import StdioAdapter
    adapter = StdioAdapter([sys.executable, sys.argv[1], sys.argv[2]], timeout=600)
    outcome = "answered"
    try:
        adapter.describe()
        if sys.argv[2] == "between-calls":  # a request larger than a pipe holds, to a flooding program
            many = [WireCandidate(doc_id=f"d{i}" * 40, chunk_index=0, original_rank=i + 1, score=0.1,
                                  score_label="dense") for i in range(2000)]
            adapter.post_process(PostProcessRequest(candidates=many))
        adapter.quality_score(QualityRequest(score_label="dense", score=0.5))
    except Exception as exc:
        outcome = f"{type(exc).__name__}: {exc}"[:600]
    finally:
        adapter.close()
    # The high-water mark of this process's own memory since its exec (VmHWM). Not getrusage's ru_maxrss:
    # Linux carries the parent's peak across a vfork and exec into it, so a kit side started by a pytest
    # worker that had grown to 1 GB reported 1 GB, whatever the kit did.
    with open("/proc/self/status") as status:
        peak = next(int(line.split()[1]) for line in status if line.startswith("VmHWM:")) * 1024
    print(json.dumps({"peak": peak, "outcome": outcome, "warnings": adapter.warnings}))
    """
)


def _kit_run(tmp_path: Path, flood: str, timeout: float = 900) -> dict:
    program = tmp_path / "flood.py"
    program.write_text(PROGRAM)
    kit = tmp_path / "kit.py"
    kit.write_text(KIT_SIDE)
    done = subprocess.run(
        [sys.executable, str(kit), str(program), flood],
        capture_output=True,
        text=True,
        timeout=900,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


@pytest.fixture(scope="module")
def quiet_peak(tmp_path_factory: pytest.TempPathFactory) -> int:
    return _kit_run(tmp_path_factory.mktemp("quiet"), "none")["peak"]


def test_a_600_mb_stderr_flood_is_cut_noted_and_keeps_the_kit_small(tmp_path: Path, quiet_peak: int) -> None:
    run = _kit_run(tmp_path, "stderr")
    assert run["outcome"] == "answered"
    assert run["peak"] < KIT_PEAK_LIMIT, f"peak {run['peak'] / MB:.0f} MB"
    assert run["peak"] - quiet_peak < FLOOD_EXTRA_LIMIT, (
        f"the flood added {(run['peak'] - quiet_peak) / MB:.0f} MB to a quiet run's {quiet_peak / MB:.0f} MB"
    )
    assert [w for w in run["warnings"] if "stderr lines longer than" in w and "209,715,200" in w], run


def test_a_300_mb_stdout_line_errors_the_call_and_keeps_the_kit_small(
    tmp_path: Path, quiet_peak: int
) -> None:
    run = _kit_run(tmp_path, "stdout-line")
    assert "longer than the kit reads" in run["outcome"], run
    assert "314,572,800 bytes" in run["outcome"], run
    assert run["peak"] - quiet_peak < FLOOD_EXTRA_LIMIT, f"added {(run['peak'] - quiet_peak) / MB:.0f} MB"


def test_200_mb_of_stdout_noise_is_bounded_by_the_unread_budget(tmp_path: Path, quiet_peak: int) -> None:
    run = _kit_run(tmp_path, "stdout-lines")
    assert "more than 200 lines on stdout" in run["outcome"], run  # the noise bound, as before
    assert run["peak"] - quiet_peak < FLOOD_EXTRA_LIMIT, f"added {(run['peak'] - quiet_peak) / MB:.0f} MB"


def test_a_program_flooding_stdout_between_calls_never_blocks_a_large_request(
    tmp_path: Path, quiet_peak: int
) -> None:
    """The reader drops past its budget instead of waiting: a child blocked on a full stdout pipe would
    never read the request the kit is writing to it, and both would wait for ever."""
    run = _kit_run(tmp_path, "between-calls", timeout=300)
    assert "stdout" in run["outcome"], run  # too much on stdout: the call errors, the program restarts
    assert run["peak"] - quiet_peak < FLOOD_EXTRA_LIMIT, f"added {(run['peak'] - quiet_peak) / MB:.0f} MB"

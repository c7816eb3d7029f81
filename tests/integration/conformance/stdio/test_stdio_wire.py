"""The wire as docs/stdio-protocol.md states it: UTF-8 both ways whatever the locale, strict JSON (no NaN
or Infinity), the reply shapes the schema gives (a stop reply needs its result), the handshake's own
fields kept and reported."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest

from conformance import PostProcessRequest, QualityRequest, WireCandidate
from conformance.boundary._errors import ImplementationProcessError, InvalidReplyError
from conformance.commands._smoke import ADVICE, advice_for, smoke
from conformance.stdio import StdioAdapter
from conformance.stdio._process import utf8_environment

from ._stdio_miniatures import TEMPLATE, TOKEN

QUALITY = QualityRequest(score_label="dense", score=1.0)
DOC_ID = "知识库-é-№7"
TEXT = "Überprüfung der Rückgabe – 检索 «quoted»"

# A program that writes its replies the way a JVM does under its locale: in the locale's encoding, with
# '?' for every character it cannot encode. It reads stdin as UTF-8, strictly, so a kit that wrote
# anything else would crash it. It tells, in its start reply, what environment it was given.
LOCALE_WRITER = """\
import json, locale, os, sys
out = open(sys.stdout.fileno(), "w", encoding=locale.getencoding(), errors="replace", closefd=False)
for raw in sys.stdin.buffer:
    m = json.loads(raw.decode("utf-8"))
    reply = {"seq": m["seq"], "result": None}
    if m["type"] == "start":
        seen = {k: os.environ.get(k) for k in ("LC_ALL", "JAVA_TOOL_OPTIONS", "PYTHONIOENCODING")}
        seen["encoding"] = locale.getencoding()
        reply["result"] = {"name": "locale-writer", "version": "1", "language": "python",
                           "capabilities": ["post_process"], "seen": seen}
    elif m["type"] == "post_process":
        c = m["request"]["candidates"][0]
        block = {"evidenceKey": f"{c['docId']}#{c['chunkIndex']}", "docId": c["docId"],
                 "chunkIndex": c["chunkIndex"], "originalRank": c["originalRank"], "qualityScore": 1.0,
                 "scoreLabel": "hybrid", "hitReasons": [c["text"]]}
        reply["result"] = {"blocks": [block], "relevanceLevel": "PRECISE", "topQualityScore": 1.0,
                           "isLowQuality": False}
    out.write(json.dumps(reply, ensure_ascii=False) + "\\n")
    out.flush()
    if m["type"] == "stop":
        break
"""


def _c_locale(monkeypatch: pytest.MonkeyPatch) -> None:
    """The kit itself under a C locale, as on many CI images."""
    monkeypatch.setenv("LANG", "C")
    monkeypatch.setenv("LC_ALL", "C")
    for name in ("LC_CTYPE", "PYTHONIOENCODING", "PYTHONUTF8", "JAVA_TOOL_OPTIONS"):
        monkeypatch.delenv(name, raising=False)


def _echo(adapter: StdioAdapter) -> tuple[str, tuple[str, ...]]:
    candidate = WireCandidate(doc_id=DOC_ID, chunk_index=0, text=TEXT, original_rank=1, score_label="hybrid")
    block = adapter.post_process(PostProcessRequest(candidates=(candidate,))).blocks[0]
    return block.doc_id, block.hit_reasons


def test_non_ascii_ids_and_texts_survive_a_c_locale_both_ways(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _c_locale(monkeypatch)
    script = tmp_path / "locale_writer.py"
    script.write_text(LOCALE_WRITER, encoding="utf-8")
    adapter = StdioAdapter([sys.executable, str(script)], timeout=10)
    try:
        seen = adapter.describe().model_extra["seen"]  # type: ignore[index]
        assert seen["LC_ALL"] == "C.UTF-8"
        assert "-Dfile.encoding=UTF-8" in seen["JAVA_TOOL_OPTIONS"]
        assert seen["PYTHONIOENCODING"] == "utf-8"
        assert _echo(adapter) == (DOC_ID, (TEXT,))
    finally:
        adapter.close()
    # The same program, told to keep the C locale: what a JVM under it writes, and why the kit sets it.
    kept = StdioAdapter([sys.executable, str(script)], timeout=10, env={"LC_ALL": "C"})
    try:
        doc_id, _ = _echo(kept)
        assert doc_id != DOC_ID
        assert "?" in doc_id
    finally:
        kept.close()


def test_a_utf8_locale_is_left_alone_and_java_options_are_kept() -> None:
    env = utf8_environment({"LANG": "de_DE.UTF-8", "JAVA_TOOL_OPTIONS": "-Xmx64m -Dfile.encoding=UTF-8"})
    assert "LC_ALL" not in env
    options = env["JAVA_TOOL_OPTIONS"].split()
    assert options[:2] == ["-Xmx64m", "-Dfile.encoding=UTF-8"]
    assert options.count("-Dfile.encoding=UTF-8") == 1
    assert "-Dstdout.encoding=UTF-8" in options
    assert utf8_environment({"LC_CTYPE": "POSIX"})["LC_ALL"] == "C.UTF-8"


def _adapter(tmp_path: Path, fault: str, **options: Any) -> StdioAdapter:
    script = tmp_path / f"fault_{fault}.py"
    script.write_text(TEMPLATE.format(fault=fault, state=str(tmp_path / "state.txt"), token=TOKEN))
    adapter = StdioAdapter([sys.executable, str(script)], timeout=5, **options)
    adapter.describe()
    return adapter


def test_a_reply_that_is_not_utf8_errors_the_call_naming_the_byte(tmp_path: Path) -> None:
    adapter = _adapter(tmp_path, "latin1-reply")
    try:
        with pytest.raises(InvalidReplyError, match=r"not UTF-8: byte 0xe9 at offset 36") as caught:
            adapter.quality_score(QUALITY)
        assert caught.value.problem == "not_utf8"  # type: ignore[attr-defined]
        assert "StandardCharsets.UTF_8" in str(caught.value)  # what to do
        assert adapter.canonicalize_label("rrf_fused") == "hybrid"  # the program keeps serving
    finally:
        adapter.close()


def test_a_log_line_that_is_not_utf8_is_noise_like_any_log_line(tmp_path: Path) -> None:
    adapter = _adapter(tmp_path, "latin1-log")
    try:
        assert adapter.quality_score(QUALITY) == 0.5
        assert len(adapter.warnings) == 1
        assert "not UTF-8 either: byte 0xe9 at offset 6" in adapter.warnings[0]
    finally:
        adapter.close()
    strict = _adapter(tmp_path, "latin1-log", strict_stdout=True)
    try:
        with pytest.raises(InvalidReplyError, match="not UTF-8"):
            strict.quality_score(QUALITY)
    finally:
        strict.close()


@pytest.mark.parametrize(
    ("fault", "said"),
    [("nan", "result is NaN"), ("infinity", "result is -Infinity"), ("huge", "result is 1e999")],
)
def test_nan_and_infinity_are_not_json_and_the_reply_is_invalid(
    tmp_path: Path, fault: str, said: str
) -> None:
    adapter = _adapter(tmp_path, fault)
    try:
        with pytest.raises(InvalidReplyError, match=said) as caught:
            adapter.quality_score(QUALITY)
        assert "JSON has no NaN or Infinity" in str(caught.value)
        assert caught.value.problem == "non_finite"  # type: ignore[attr-defined]
        assert advice_for(caught.value, "quality_score") == ADVICE["non_finite"]
        assert adapter.canonicalize_label("rrf_fused") == "hybrid"  # invalid, not lost: no restart
        assert (tmp_path / "state.txt").read_text().splitlines() == ["start"]
    finally:
        adapter.close()


def _smoke(tmp_path: Path, fault: str) -> tuple[int, list[str]]:
    script = tmp_path / f"smoke_{fault}.py"
    template = TEMPLATE.replace('caps = ["labels", "quality", "search"]', 'caps = ["labels", "quality"]')
    script.write_text(template.format(fault=fault, state=str(tmp_path / "state.txt"), token=TOKEN))
    said: list[str] = []
    code = smoke([sys.executable, str(script)], timeout=5, say=said.append)
    return code, said


def test_smoke_fails_a_bare_nan_instead_of_printing_it(tmp_path: Path) -> None:
    code, said = _smoke(tmp_path, "nan")
    assert code == 1
    failed = next(line for line in said if line.startswith("FAIL quality_score"))
    assert "result is NaN" in failed
    assert not any(line.startswith("ok   quality_score") for line in said)
    assert f"  advice: {ADVICE['non_finite']}" in said


def test_a_stop_reply_without_result_is_invalid_as_the_schema_says(tmp_path: Path) -> None:
    jsonschema = pytest.importorskip("jsonschema", reason="jsonschema is in the 'test' extra")
    from conformance.stdio import protocol_schemas

    for operation in ("stop", "prepare"):
        with pytest.raises(jsonschema.ValidationError, match="is not valid under any of the given schemas"):
            jsonschema.validate({"seq": 4}, protocol_schemas()[f"reply.{operation}.schema.json"])
        jsonschema.validate({"seq": 4, "result": None}, protocol_schemas()[f"reply.{operation}.schema.json"])
    warned: list[str] = []
    adapter = _adapter(tmp_path, "gson-nulls", on_warning=warned.append)
    adapter.close()
    assert len(warned) == 1
    assert "the stop request was not answered as the protocol says" in warned[0]
    assert "result: Field required" in warned[0]
    assert adapter.warnings == warned
    strict = _adapter(tmp_path, "gson-nulls")
    with pytest.raises(InvalidReplyError, match="stop reply"):
        strict.close(strict=True)
    code, said = _smoke(tmp_path, "gson-nulls")
    assert code == 1
    assert any(line.startswith("FAIL stop: ") and "Field required" in line for line in said), said


def test_an_answered_stop_is_no_warning(tmp_path: Path) -> None:
    adapter = _adapter(tmp_path, "none")
    adapter.close(strict=True)
    assert adapter.warnings == []
    code, said = _smoke(tmp_path, "none")
    assert code == 0, said
    assert "ok   stop: None" in said


def test_the_handshake_keeps_fields_the_protocol_does_not_define_and_has_no_default_language(
    tmp_path: Path,
) -> None:
    adapter = _adapter(tmp_path, "handshake-extra")
    try:
        info = adapter.describe()
        assert info.model_extra == {"vendor": {"team": "acme", "build": 7}}
        assert info.language is None  # not silently "python": it did not say
    finally:
        adapter.close()
    code, said = _smoke(tmp_path, "handshake-extra")
    assert code == 0, said
    assert any("language unknown" in line for line in said)
    assert "note start: fields the protocol does not define, kept and reported: " in "\n".join(said)


def test_a_field_beside_every_result_is_a_note_in_a_run_and_in_smoke_never_a_failure(
    tmp_path: Path,
) -> None:
    adapter = _adapter(tmp_path, "elapsed")
    try:
        assert adapter.canonicalize_label("rrf_fused") == "hybrid"
        assert adapter.quality_score(QualityRequest(score_label="dense", score=0.5)) == 0.5
        notes = adapter.take_notes()
        assert [n for n in notes if "elapsedMs" in n and "quality_score" in n], notes
        assert adapter.warnings == []
    finally:
        adapter.close(strict=True)
    code, said = _smoke(tmp_path, "elapsed")
    assert code == 0, said
    assert any(line.startswith("note quality_score:") and "elapsedMs" in line for line in said), said


def test_a_byte_order_mark_before_the_start_reply_is_a_warning_not_a_refusal(tmp_path: Path) -> None:
    adapter = _adapter(tmp_path, "bom")
    try:
        assert adapter.describe().name == "mini"
        assert adapter.quality_score(QualityRequest(score_label="dense", score=0.5)) == 0.5
        assert [w for w in adapter.warnings if "byte-order mark" in w], adapter.warnings
    finally:
        adapter.close(strict=True)
    code, said = _smoke(tmp_path, "bom")
    assert code == 0, said
    assert any(line.startswith("warn ") and "byte-order mark" in line for line in said), said


def test_a_program_that_dies_on_stop_is_a_warning_not_an_error(tmp_path: Path) -> None:
    adapter = _adapter(tmp_path, "none")
    adapter._child.proc.stdin.close()  # type: ignore[union-attr]  # it reads EOF and exits
    adapter._child.proc.wait(timeout=5)  # type: ignore[union-attr]
    adapter.close()  # a dead child gets no stop: nothing to warn about
    assert adapter.warnings == []
    with pytest.raises(ImplementationProcessError, match="was closed"):
        adapter.quality_score(QUALITY)

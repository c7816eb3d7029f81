"""docs/engines.md says what the kit tells programs in prepare, and its SDK claims name what locks them
and tests that exist."""

from __future__ import annotations

import json
import re
from importlib.metadata import version
from pathlib import Path

import pytest

from conformance.boundary._protocol import EngineFacts
from conformance.engines._facts import ESCAPED_LITERAL, JSON_LITERAL, NO_UNICODE_ESCAPE_LITERAL, engine_facts

ROOT = Path(__file__).resolve().parents[3]
PAGE = (ROOT / "docs" / "engines.md").read_text(encoding="utf-8")
# Each section of the page, and a version an engine of it reports.
SECTIONS = {
    "Milvus Lite 3.x": "milvus_lite-3.2.2",
    "Milvus Lite 2.5.1": "milvus_lite-2.5.1",
    "Milvus 2.3.5": "v2.3.5-lite",
    "A server by URI": "v2.5.4",
}


def _section(title: str) -> str:
    start = PAGE.index(f"\n## {title}\n")
    end = PAGE.find("\n## ", start + 1)
    return PAGE[start : end if end != -1 else None]


def _table(section: str) -> dict[str, str]:
    rows = re.findall(r"^\| ([^|]+?) \| ([^|]+?) \|$", section, flags=re.MULTILINE)
    return {fact: value for fact, value in rows if fact not in ("fact", "---")}


def _said(value: bool | None) -> str:
    return {True: "yes", False: "no"}[bool(value)]


@pytest.mark.parametrize("title", sorted(SECTIONS))
def test_each_engines_table_says_what_prepare_tells_the_program(title: str) -> None:
    facts: EngineFacts = engine_facts(SECTIONS[title])
    section = _section(title)
    table = _table(section)
    level = table["Milvus API level"]
    assert level == facts.api_level or level.startswith("the reported line"), (title, level)
    assert table["hybrid search"].startswith(_said(facts.hybrid_search)), title
    assert table["BM25"] == _said(facts.bm25), title
    assert table["BM25 score sign"].startswith(facts.bm25_scores or "none"), title
    assert table["filter templates"] == _said(facts.filter_templates), title
    assert table["nullable fields"] == _said(facts.nullable_fields), title
    assert table["index types"].split(", ") == list(facts.index_types), title
    assert facts.docs.endswith("#" + re.sub(r"[^a-z0-9 -]", "", title.lower()).replace(" ", "-")), facts.docs
    recipe = {
        JSON_LITERAL: "any JSON string",
        NO_UNICODE_ESCAPE_LITERAL: "never a\n`\\uXXXX` escape",
        ESCAPED_LITERAL: "backslash and double quote escaped",
    }[facts.filter_literals]
    assert recipe in section, title
    for call in ("ensure_ascii=False", "disableHtmlEscaping()", "JSON.stringify(c)"):
        assert call in section or title == "A server by URI", (title, call)
        assert call in (facts.filter_literals or ""), (title, call)


def test_the_page_needs_nothing_outside_the_repository() -> None:
    # What a reader needs is in the repository: no absolute path, nothing of the machines it was made on.
    for path in re.findall(r"`(/[\w./-]+)`", PAGE):
        assert path.startswith("/healthz"), f"docs/engines.md points outside the repository: {path}"
    assert "/work/" not in PAGE


def test_the_sdk_versions_the_page_names_are_the_ones_locked_and_installed() -> None:
    lines = {
        "2.6": ROOT / "examples" / "node" / "package.json",
        "3.0": ROOT / "examples" / "node" / "sdk-3.0" / "package.json",
    }
    lite3 = _section("Milvus Lite 3.x")
    for path in lines.values():
        locked = json.loads(path.read_text())["dependencies"]["@zilliz/milvus2-sdk-node"]
        assert locked in lite3, f"{path} locks {locked}; docs/engines.md does not name it"
        assert (path.parent / "package-lock.json").is_file(), path
    pymilvus_line = ".".join(version("pymilvus").split(".")[:2])
    assert f"pymilvus {pymilvus_line}" in lite3, f"the kit's venv has pymilvus {version('pymilvus')}"


def test_every_test_the_page_cites_exists() -> None:
    for path, name in re.findall(r"`(tests/[\w/]+\.py)::(\w+)`", PAGE):
        assert f"def {name}(" in (ROOT / path).read_text(encoding="utf-8"), f"{path}::{name}"
    for path in re.findall(r"`(tests/[\w/]+\.py)`", PAGE):
        assert (ROOT / path).is_file(), path

"""The README is a map and docs/ the manual: every relative link in them resolves, to a file that exists
and, where it names a heading, to a heading that exists (GitHub's anchors). A page moved or a section
renamed fails here, not in a reader's browser. A file of the project a page names in code (`tests/...`,
`conformance/...`) exists too: tests moved into tiers once, and three pages kept the old paths. The
README stays a map: at most 12 KB."""

from __future__ import annotations

import re
from fnmatch import fnmatch
from pathlib import Path
from urllib.parse import unquote

import pytest
from markdown_it import MarkdownIt

ROOT = Path(__file__).resolve().parents[2]
PAGES = sorted(
    p
    for p in [ROOT / "README.md", ROOT / "tests" / "README.md", *(ROOT / "docs").rglob("*.md")]
    if p.exists()
)


def _links(page: Path) -> list[str]:
    """The targets of every link in the page, as a Markdown renderer sees them (none from code blocks)."""
    found = []

    def walk(tokens) -> None:
        for token in tokens:
            if token.type == "link_open":
                found.append(token.attrGet("href"))
            if token.children:
                walk(token.children)

    walk(MarkdownIt("commonmark").enable("table").parse(page.read_text(encoding="utf-8")))
    return found


PROJECT_FOLDERS = (
    "benchmarks/",
    "conformance/",
    "docs/",
    "evaluation/",
    "examples/",
    "features/",
    "reference/",
    "tests/",
)
PLACEHOLDER = re.compile(r"[<>*{}$|]|\.\.\.")  # a pattern or a path to fill in, not a path


def _project_paths(page: Path) -> list[str]:
    """The project paths the page names in inline code (`tests/unit/`, `conformance/plugin.py:12`, the
    path in `pytest tests/x.py`), as written; patterns and placeholders (`<name>`, `*.md`, `...`) are
    not paths."""
    found = []

    def walk(tokens) -> None:
        for token in tokens:
            if token.type == "code_inline":  # a path alone, or in a command (`pytest tests/x.py -q`)
                words = token.content.split()
                found.extend(w for w in words if w.startswith(PROJECT_FOLDERS) and not PLACEHOLDER.search(w))
            if token.children:
                walk(token.children)

    walk(MarkdownIt("commonmark").enable("table").parse(page.read_text(encoding="utf-8")))
    return found


def _ignored(path: str, root: Path) -> bool:
    """Whether git ignores the path (a part of it matches a pattern of the root's ``.gitignore``): made
    by a command (``examples/node/node_modules``), not a file of the project, so absent from a clone."""
    gitignore = root / ".gitignore"
    lines = gitignore.read_text(encoding="utf-8").splitlines() if gitignore.exists() else []
    patterns = [line.strip().rstrip("/") for line in lines if line.strip() and not line.startswith("#")]
    return any(fnmatch(part, pattern) for part in path.split("/") for pattern in patterns)


def _missing(page: Path, root: Path = ROOT) -> list[str]:
    """The project paths the page names that do not exist (``::test`` and ``:line`` suffixes dropped)."""
    paths = [(written, written.partition("::")[0].partition(":")[0]) for written in _project_paths(page)]
    return [written for written, path in paths if not _ignored(path, root) and not (root / path).exists()]


def _anchors(page: Path) -> set[str]:
    """GitHub's heading anchors: lower case, punctuation but '-' and '_' dropped, spaces to '-'."""
    anchors: set[str] = set()
    in_code = False
    for line in page.read_text(encoding="utf-8").splitlines():
        if line.startswith("```"):
            in_code = not in_code
        heading = re.match(r"#{1,6} (.*)", line)
        if heading and not in_code:
            text = re.sub(r"[^\w\- ]", "", heading.group(1).strip().lower())
            anchors.add(text.replace(" ", "-"))
    return anchors


def _broken(page: Path) -> list[str]:
    broken = []
    for href in _links(page):
        if re.match(r"^[a-z][a-z0-9+.-]*:", href):  # http:, https:, mailto:
            continue
        path, _, anchor = href.partition("#")
        target = (page.parent / unquote(path)).resolve() if path else page
        if not target.exists():
            broken.append(
                f"{href}: no such file {target.relative_to(ROOT) if target.is_relative_to(ROOT) else target}"
            )
        elif anchor and target.suffix == ".md" and anchor not in _anchors(target):
            broken.append(f"{href}: no heading with the anchor #{anchor} in {target.name}")
    return broken


@pytest.mark.parametrize("page", PAGES, ids=lambda p: str(p.relative_to(ROOT)))
def test_every_relative_link_resolves(page: Path) -> None:
    assert _broken(page) == []


@pytest.mark.parametrize("page", PAGES, ids=lambda p: str(p.relative_to(ROOT)))
def test_every_project_path_a_page_names_exists(page: Path) -> None:
    assert _missing(page) == []


def test_a_moved_file_a_page_still_names_is_found(tmp_path: Path) -> None:
    (tmp_path / "tests" / "unit").mkdir(parents=True)
    (tmp_path / "tests" / "unit" / "test_a.py").write_text("", encoding="utf-8")
    (tmp_path / ".gitignore").write_text("# made by npm\nnode_modules/\n", encoding="utf-8")
    page = tmp_path / "page.md"
    page.write_text(
        "`tests/unit/test_a.py::test_x` and `tests/unit/` are here; `pytest tests/test_a.py -q` moved;\n"
        "`examples/node/node_modules` is made by `npm ci`, ignored by git;\n"
        "`tests/<tier>/` and `docs/*.md` are patterns, `rqs-report/` is not the project's.\n\n"
        "```console\npytest tests/gone.py\n```\n",
        encoding="utf-8",
    )
    assert _missing(page, tmp_path) == ["tests/test_a.py"]


def test_a_broken_link_and_a_missing_anchor_are_found(tmp_path: Path) -> None:
    (tmp_path / "there.md").write_text("# A heading, with `code`\n", encoding="utf-8")
    page = tmp_path / "page.md"
    page.write_text(
        "[ok](there.md) [ok](there.md#a-heading-with-code) [web](https://example.org/x)\n"
        "[gone](missing.md) [no anchor](there.md#elsewhere)\n\n```text\n[in code](nowhere.md)\n```\n",
        encoding="utf-8",
    )
    assert [line.split(":")[0] for line in _broken(page)] == ["missing.md", "there.md#elsewhere"]


def test_the_readme_is_a_map_not_the_manual() -> None:
    assert (ROOT / "README.md").stat().st_size <= 12 * 1024

"""``build_site``: reports + feature files + pinned spec -> a static site, its Markdown twin and badges."""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from ..boundary._atomic import OutputNotWrittenError, write_atomically
from ..boundary._errors import ConformanceError
from ..spec._paths import features_dir, spec_path
from ..spec._pinned import read_spec
from ._badge import badge
from ._gherkin import read_features
from ._html import index_page, readings_page, requirement_page
from ._markdown import index_markdown, requirement_markdown
from ._pages import load_columns, pages_for

__all__ = ["Site", "build_site", "docs_main"]


@dataclass(frozen=True)
class Site:
    """What :func:`build_site` wrote, all under ``root``."""

    root: Path
    index: Path
    markdown_index: Path
    pages: tuple[Path, ...]
    badges: tuple[Path, ...]


def build_site(
    results: Sequence[str | os.PathLike[str]],
    out: str | os.PathLike[str],
    *,
    features: str | os.PathLike[str] | None = None,
    spec: str | os.PathLike[str] | None = None,
) -> Site:
    """Write the site for these reports into ``out`` (created if needed; files of the same name replaced).

    ``results`` are report.json files (or their directories), one column each, in this order.
    ``features`` and ``spec`` default to the kit's own feature files and pinned spec.

    Layout: ``index.html`` and ``README.md`` (the matrix), ``<requirement id>.html`` and ``.md`` (spec
    text, Gherkin, statuses and messages), ``badges/<implementation>.json`` (shields.io endpoint).
    """
    columns = load_columns([Path(p) for p in results])
    parsed = read_spec(Path(spec) if spec else spec_path())
    pages = pages_for(read_features(Path(features) if features else features_dir()), parsed)
    root = Path(out)
    try:
        (root / "badges").mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise OutputNotWrittenError(root / "badges", exc.errno, exc.strerror or str(exc)) from exc

    def write(name: str, text: str) -> Path:
        # Each page whole or not at all: a full disk leaves the earlier page, never a truncated one.
        return write_atomically(root / name, text)

    written = []
    for page in pages:
        written.append(write(f"{page.stem}.html", requirement_page(page, columns, parsed)))
        write(f"{page.stem}.md", requirement_markdown(page, columns))
    readings = (Path(spec).parent if spec else spec_path().parent) / "readings.md"
    if readings.is_file():
        text = readings.read_text(encoding="utf-8")
        written.append(write("readings.html", readings_page(text, parsed, columns)))
        write("readings.md", text)
    badges = [write(f"badges/{c.slug}.json", json.dumps(badge(c.report), indent=2) + "\n") for c in columns]
    return Site(
        root=root,
        index=write("index.html", index_page(pages, columns, parsed)),
        markdown_index=write("README.md", index_markdown(pages, columns, parsed)),
        pages=tuple(written),
        badges=tuple(badges),
    )


def docs_main(results: Sequence[str], out: str, *, spec: str | None = None) -> int:
    """The CLI: build the site and print where it is; 2 with the reason when an input is unusable."""
    try:
        site = build_site(results, out, spec=spec)
    except ConformanceError as exc:
        print(f"rag-conformance docs: {exc}", file=sys.stderr)
        return 2
    print(f"site: {site.index} ({len(site.pages)} requirement pages); Markdown: {site.markdown_index}")
    for path in site.badges:
        print(f"badge: {path}")
    return 0

"""What each engine the kit starts supports and lacks, told to the implementation in ``prepare``.

A team in another language meets the engine through its own SDK: it needs the Milvus API level (to pick
an SDK line), whether filter templates exist (or how to write a category literal), whether nullable
fields do, and the sign of BM25 scores. The facts below were measured on this machine's engines
(``test_the_engine_facts_prepare_carries_are_what_the_engine_does`` in
``tests/integration/conformance/engines/test_other_engines.py`` checks each one against the running
engine); ``docs/engines.md`` is their page. A server reached by URI is described from its reported
version, by the server's documented behaviour of that line.
"""

from __future__ import annotations

import re

from ..boundary._protocol import EngineFacts

__all__ = ["ESCAPED_LITERAL", "JSON_LITERAL", "NO_UNICODE_ESCAPE_LITERAL", "engine_facts"]

_CALLS = (
    "Python: json.dumps(c, ensure_ascii=False); Java with Gson: new GsonBuilder().disableHtmlEscaping()"
    ".create().toJson(c); JavaScript: JSON.stringify(c)"
)
_DEFAULTS = (
    "json.dumps's default writes non-ASCII as \\uXXXX, and Gson's default writes < > & = ' as \\u003c, "
    "\\u003e, \\u0026, \\u003d, \\u0027"
)
NO_UNICODE_ESCAPE_LITERAL = (
    'write the category as a JSON string in double quotes (category == "...") with every character as '
    'itself except backslash, double quote and newline, escaped as \\\\, \\" and \\n; never a \\uXXXX '
    f"escape: this engine refuses it (unknown escape sequence \\u). {_CALLS}; {_DEFAULTS}"
)
"""Milvus Lite 3.x (measured on 3.2.2): a JSON string, but without ``\\u`` escapes."""
ESCAPED_LITERAL = (
    'write the category in double quotes with backslash and double quote escaped (\\\\ and \\"), every other '
    "character as itself; never a \\uXXXX escape: this engine takes it without an error, and the filter "
    f"then matches nothing. {_CALLS}; {_DEFAULTS}. This engine does not read "
    "\\n as a newline either, and a raw newline does not parse: a category holding a newline cannot be "
    "matched by a literal here"
)
"""Milvus Lite 2.5.1: quotes and backslashes escaped; ``\\u`` and ``\\n`` silently match nothing."""
JSON_LITERAL = (
    'write the category as a JSON string in double quotes (category == "..."): backslash, double quote '
    "and newline escaped as \\\\, \\\" and \\n; \\uXXXX escapes are read too, so any JSON encoder's string "
    f"works. Portable to every engine the kit starts: {_CALLS}"
)
"""A Milvus server (measured on 2.3.5): any JSON string, ``\\u`` escapes included."""
_ALL_SERVER_INDEXES = ("FLAT", "IVF_FLAT", "IVF_SQ8", "IVF_PQ", "HNSW", "SCANN", "DISKANN", "AUTOINDEX")


def _lite3(version: str) -> EngineFacts:
    return EngineFacts(
        version=version,
        engine="milvus-lite-3",
        api_level="2.5",
        hybrid_search=True,
        bm25=True,
        bm25_scores="non-positive",  # negated: the best match has the most negative score
        filter_templates=False,
        nullable_fields=True,
        # Every name is accepted, and its build parameters ignored: the search is exact whatever it says.
        index_types=_ALL_SERVER_INDEXES,
        filter_literals=NO_UNICODE_ESCAPE_LITERAL,
        newline_categories=True,
        docs="docs/engines.md#milvus-lite-3x",
    )


def _lite251(version: str) -> EngineFacts:
    bm25 = not version.startswith("milvus_lite-2.4")  # BM25 full-text search came with 2.5
    return EngineFacts(
        version=version,
        engine="milvus-lite-2.5" if bm25 else "milvus-lite-2.4",
        api_level="2.5" if bm25 else "2.4",
        hybrid_search=True,
        bm25=bm25,
        bm25_scores="non-negative" if bm25 else None,
        filter_templates=False,
        nullable_fields=False,
        index_types=("FLAT", "IVF_FLAT", "AUTOINDEX"),
        filter_literals=ESCAPED_LITERAL,
        newline_categories=False,
        docs="docs/engines.md#milvus-lite-251",
    )


def _server(version: str, line: tuple[int, int]) -> EngineFacts:
    modern = line >= (2, 5)
    return EngineFacts(
        version=version,
        engine="milvus-server",
        api_level=f"{line[0]}.{line[1]}",
        hybrid_search=line >= (2, 4),
        bm25=modern,
        bm25_scores="non-negative" if modern else None,
        filter_templates=modern,
        nullable_fields=modern,
        index_types=_ALL_SERVER_INDEXES,
        filter_literals=JSON_LITERAL,  # measured on 2.3.5, the oldest line the kit starts
        newline_categories=True,
        docs="docs/engines.md#milvus-235" if line == (2, 3) else "docs/engines.md#a-server-by-uri",
    )


_LINE = re.compile(r"v?(\d+)\.(\d+)")


def engine_facts(version: str) -> EngineFacts:
    """The facts of the engine that reports ``version`` (``milvus_lite-3.2.2``, ``milvus_lite-2.5.1``,
    ``v2.3.5-lite``, ``v2.5.4``); for a version the kit does not know, what the version alone says."""
    if version.startswith("milvus_lite-3."):
        return _lite3(version)
    if version.startswith("milvus_lite-2."):
        return _lite251(version)
    match = _LINE.match(version)
    if match is None:
        return EngineFacts(version=version, engine="unknown")
    return _server(version, (int(match.group(1)), int(match.group(2))))

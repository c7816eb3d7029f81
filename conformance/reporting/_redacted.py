"""A report as the kit writes it: no credential, and no control character an implementation put in its
words, in any text of it (report.json, JUnit, the site and the terminal table are all made from it)."""

from __future__ import annotations

import functools
from typing import get_args

from pydantic import BaseModel

from ..boundary._redact import redact
from ..boundary._visible import visible_text
from ._report import Report

__all__ = ["redacted"]


def redacted(report: Report) -> Report:
    """``report`` with every text in it passed through :func:`~conformance.boundary._redact.redact`:
    what the kit writes (report.json, JUnit, the site, the terminal table) never holds a credential;
    and through ``visible_text``: a control character an implementation put in its words (a colour
    code in its stderr, ESC in an id) is kept as its escape (``\\x1b``), so no view of the report
    obeys it."""
    return Report.model_validate(_redact_values(report.model_dump(mode="json")))


@functools.cache
def _schema_words() -> frozenset[str]:
    """Every field name of the report's models: the schema's own words, never an implementation's data."""
    words: set[str] = set()
    seen: set[type] = set()
    todo: list[object] = [Report]
    while todo:
        kind = todo.pop()
        if isinstance(kind, type) and issubclass(kind, BaseModel):
            if kind in seen:
                continue
            seen.add(kind)
            for name, field in kind.model_fields.items():
                words.add(field.alias or name)
                todo.append(field.annotation)
        else:
            todo.extend(get_args(kind))
    return frozenset(words)


def _redact_values(value: object) -> object:
    if isinstance(value, str):
        return visible_text(redact(value))
    if isinstance(value, dict):
        # Keys too: an implementation's evidence may be keyed by what it echoed (its endpoint, a token).
        # Not the schema's own field names: a password that happens to be "milvus" must not rename the
        # report's `milvus` field (the report would no longer be one).
        return {
            key if key in _schema_words() else _redact_values(key): _redact_values(item)
            for key, item in value.items()
        }
    if isinstance(value, list):
        return [_redact_values(item) for item in value]
    return value

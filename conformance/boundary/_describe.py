"""One request in a few words, for the messages about a call: ``search seq 17 (mode hybrid, query ''...)``.

Used by the stdio adapter (with the ``seq`` the program saw), by :func:`~conformance.boundary._asking.ask`
for an in-process adapter that raised, and by the judge for a reply that breaks the spec.

A failure that names only the operation leaves a team guessing which of a run's hundred searches broke
(a blank query drawn by one seed only, say). The words name what decides the answer: the mode, the
query text (shortened, quoted so blanks and newlines show), the category, k and the settings a request
carries, and the ``seq`` the program saw on its stdin. Vectors and corpora are left out: they decide
little a reader can act on, and they are long.
"""

from __future__ import annotations

from typing import Any

from ._protocol import Hints, PostProcessConfig

__all__ = ["describe_call", "describe_request"]

_TEXT_CHARS = 40
_DEFAULT_CONFIG = PostProcessConfig()


def _text(value: str) -> str:
    shown = value if len(value) <= _TEXT_CHARS else value[:_TEXT_CHARS] + "…"
    note = f" ({len(value)} characters)" if len(value) > _TEXT_CHARS else ""
    return repr(shown) + note


def _hints(hints: Hints) -> str | None:
    parts = []
    if hints.domain is not None:
        parts.append(f"domain {_text(hints.domain)}")
    if hints.source_type is not None:
        parts.append(f"sourceType {_text(hints.source_type)}")
    for name, values in (("entities", hints.entities), ("keywords", hints.keywords)):
        if values:
            parts.append(f"{len(values)} {name}")
    return f"hints: {', '.join(parts)}" if parts else None


def _config(config: PostProcessConfig) -> str | None:
    changed = [
        f"{name} {getattr(config, name)!r}"
        for name in PostProcessConfig.model_fields
        if getattr(config, name) != getattr(_DEFAULT_CONFIG, name)
    ]
    return f"config: {', '.join(changed)}" if changed else None


def _fields(operation: str, fields: dict[str, Any]) -> list[str]:
    request = fields.get("request")
    if operation == "canonicalize_label":
        return [f"label {_text(str(fields.get('label')))}"]
    if operation == "quality_score" and request is not None:
        parts = [f"scoreLabel {_text(request.score_label)}", f"score {request.score!r}"]
        parts += [f"originalRank {request.original_rank}", f"batchSize {request.batch_size}"]
        if request.dense_distance is not None:
            parts.append(f"denseDistance {request.dense_distance!r}")
        return parts
    if operation == "post_process" and request is not None:
        labels = sorted({c.score_label for c in request.candidates})
        parts = [f"{len(request.candidates)} candidates", f"labels {', '.join(labels) or 'none'}"]
        return parts + [p for p in (_hints(request.hints), _config(request.config)) if p]
    if operation in ("search", "lookup") and request is not None:
        k = request.k if operation == "search" else request.retrieve_k
        parts = [f"mode {request.mode}", f"query {_text(request.query_text)}"]
        parts.append(f"category {_text(request.category)}" if request.category is not None else "no category")
        parts += [f"{'k' if operation == 'search' else 'retrieveK'} {k}"]
        if request.mode == "hybrid":
            parts.append(f"rrfK {request.rrf_k}")
        if operation == "lookup":
            parts += [p for p in (_hints(request.hints), _config(request.config)) if p]
        return parts
    if operation == "prepare" and fields.get("corpus") is not None:
        corpus = fields["corpus"]
        return [f"corpus {corpus.name!r}", f"{len(corpus.chunks)} chunks", f"dim {corpus.dim}"]
    return []


def describe_request(operation: str, seq: int | None, fields: dict[str, Any]) -> str:
    """``search seq 17 (mode hybrid, query '  ', no category, k 10, rrfK 60)``: what a reader needs to
    tell this call from the run's others and send it again by hand (no ``seq`` where there is none)."""
    parts = _fields(operation, fields)
    head = operation if seq is None else f"{operation} seq {seq}"
    return head + (f" ({', '.join(parts)})" if parts else "")


# The Protocol's positional arguments, by operation, as the message fields they travel in over stdio.
_ARGUMENTS = {"canonicalize_label": ("label",), "prepare": ("endpoint", "corpus")}


def describe_call(operation: str, args: tuple[Any, ...], seq: int | None = None) -> str:
    """:func:`describe_request` of an in-process call ``implementation.<operation>(*args)``."""
    names = _ARGUMENTS.get(operation, ("request",))
    return describe_request(operation, seq, dict(zip(names, args, strict=False)))

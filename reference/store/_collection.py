"""Creating the store's collection, richest schema first, and checking one that exists.

Creating it is where the store finds out what the engine supports: the richest schema variant the
engine accepts and keeps (see :mod:`reference.store._features`). An existing collection's schema says
what it was given.
"""

from __future__ import annotations

import contextlib
import re
from types import MappingProxyType

from .._errors import EngineTimeoutError, StoreError
from ._errors import describe, scrub
from ._features import EngineFeatures, quiet_refusals, server_version
from ._parts import StoreParts
from ._schema import build_schema, check_fields, collection_features

__all__ = ["create", "existing_features"]

# Schema variants, richest first: (nullable fields, BM25). The first the engine takes and keeps wins.
_VARIANTS = ((True, True), (False, True), (True, False), (False, False))
# Nullable fields came in Milvus 2.5. An older engine is not asked for them: Milvus 2.3 accepts the flag and
# drops it (the kept-schema check sees that), but Milvus Lite 2.4.12 keeps it and its server then exits on
# the first search, and a file it wrote so cannot be opened by Lite 2.5.1 (docs/upgrade-check.md).
_NULLABLE_SINCE = (2, 5)
_VERSION = re.compile(r"(\d+)\.(\d+)")


def _before_nullable(version: str | None) -> str | None:
    """Why ``version`` is not asked for nullable fields, or ``None`` (a newer or unknown version)."""
    found = _VERSION.search(version or "")
    if found is None or (int(found[1]), int(found[2])) >= _NULLABLE_SINCE:
        return None
    return f"nullable fields came in Milvus 2.5; {version} is older, so the store did not ask for them"


def create(store: StoreParts) -> EngineFeatures:
    """Create the collection, richest schema variant first; what the engine offers it."""
    version = server_version(store.client, store.deadline_seconds)
    refused: dict[tuple[bool, bool], str] = {}
    too_old = _before_nullable(version)
    if too_old is not None:
        refused.update({(True, True): too_old, (True, False): too_old})
    for nullable, bm25 in _VARIANTS:
        if (nullable, bm25) in refused:
            continue
        reason = _try_create(store, nullable=nullable, bm25=bm25)
        if reason is None:
            missing = {}
            if not nullable:
                missing["nullable"] = refused[(True, bm25)]
            if not bm25:
                missing["bm25"] = refused[(nullable, True)]
            return EngineFeatures(version, MappingProxyType(missing))
        refused[(nullable, bm25)] = reason
    raise StoreError(
        f"Milvus could not create the collection (collection {store.collection!r}): "
        f"{refused[(True, True)]}; without nullable fields or BM25 it refused too "
        f"({refused[(False, False)]}); check that the engine is up and the name is free"
    )


def _try_create(store: StoreParts, *, nullable: bool, bm25: bool) -> str | None:
    """Create one schema variant; ``None`` on success, else why the engine refused or dropped it."""
    schema, index = build_schema(store.client, store.dim, store.index_type, nullable=nullable, bm25=bm25)
    deadline = store.deadline_seconds
    try:
        with quiet_refusals(), store._engine("create the collection"):
            store.client.create_collection(
                store.collection, schema=schema, consistency_level="Strong", timeout=deadline
            )
            kept = collection_features(store.client.describe_collection(store.collection, timeout=deadline))
            if kept == (nullable, bm25):
                # The collection is empty, so there is nothing to build: not waiting (sync=False)
                # spares pymilvus's polling, half a second per index; the load waits for the engine.
                store.client.create_index(store.collection, index, sync=False, timeout=deadline)
                store.client.load_collection(store.collection, timeout=deadline)
                return None
    except EngineTimeoutError:
        _drop_leftover(store)
        raise  # a frozen engine refused nothing: say so rather than try the smaller schemas
    except StoreError as exc:
        _drop_leftover(store)
        return scrub(describe(exc.__cause__ or exc), store._secrets)
    # Accepted but not kept: Milvus 2.3 takes a nullable field and quietly makes it required.
    _drop_leftover(store)
    named = ("nullable fields", "a BM25 Function")
    lost = [n for want, got, n in zip((nullable, bm25), kept, named, strict=True) if want and not got]
    return f"the engine accepted a schema with {' and '.join(lost)} but did not keep it"


def _drop_leftover(store: StoreParts) -> None:
    # The collection may exist though its index failed (Milvus 2.3 refuses a sparse index only
    # then); it is ours, created a moment ago, and must not stay half-made.
    with contextlib.suppress(Exception), quiet_refusals():
        if store.client.has_collection(store.collection, timeout=store.deadline_seconds):
            store.client.drop_collection(store.collection, timeout=store.deadline_seconds)


def existing_features(store: StoreParts) -> EngineFeatures:
    """Check an existing collection (this store's fields and dimension); what its schema holds."""
    with store._engine("describe the collection"):
        info = store.client.describe_collection(store.collection, timeout=store.deadline_seconds)
    check_fields(info, store.collection, store.dim)
    nullable, bm25 = collection_features(info)
    missing = {}
    if not nullable:
        missing["nullable"] = f"collection {store.collection!r} was created without nullable fields"
    if not bm25:
        missing["bm25"] = f"collection {store.collection!r} was created without a BM25 Function"
    return EngineFeatures(server_version(store.client, store.deadline_seconds), MappingProxyType(missing))

"""Vectors on the store's hot path: the query as checked and sent, and the distances to the hits."""

from __future__ import annotations

import math
import struct
from collections.abc import Sequence
from typing import cast

import numpy as np

from .._errors import InvalidQueryError

__all__ = ["checked_array", "prepared_query", "squared_l2"]


def prepared_query(values: Sequence[float], dim: int, collection: str) -> tuple[np.ndarray, list[float]]:
    """The query vector as float32 (for distances) and as the list the engine is sent.

    The engine gets the list as it was given: pymilvus packs it to float32 as numpy rounds it, so the
    engine sees the same vector the distances use. A list or tuple of numbers is packed once to check
    it (the common case, a few microseconds); anything else, or a vector that fails that check, goes
    through :func:`checked_array`, which says what is wrong with it.
    """
    if type(values) in (list, tuple):
        try:
            packed = struct.pack(f"<{dim}f", *values)
            finite = math.isfinite(sum(values))  # NaN or infinity makes the sum non-finite
        except (struct.error, OverflowError, TypeError):
            pass  # the wrong length, a value too large for float32, or not a number
        else:
            if finite:
                return np.frombuffer(packed, dtype="<f4"), list(values)
    vector = checked_array(values, dim, collection)
    return vector, vector.tolist()


def checked_array(values: Sequence[float], dim: int, collection: str) -> np.ndarray:
    """``values`` as a float32 vector of ``dim`` finite components, else :class:`InvalidQueryError`."""
    try:
        with np.errstate(over="ignore", invalid="ignore"):
            vector = np.asarray(values, dtype=np.float32)
    except (TypeError, ValueError, OverflowError):
        raise InvalidQueryError(
            f"query vector is not a list of numbers ({type(values).__name__}); embed the query text and "
            "pass the embedding"
        ) from None
    if vector.shape != (dim,):
        raise InvalidQueryError(
            f"query vector has shape {vector.shape}, collection {collection!r} expects "
            f"({dim},); embed the query with the model used at ingest"
        )
    if not np.all(np.isfinite(vector)):
        raise InvalidQueryError(
            "query vector holds NaN or infinity, or a value too large for float32; every component must "
            "be finite as a float32"
        )
    return vector


def squared_l2(stored: np.ndarray, vector: np.ndarray) -> list[float]:
    """Squared L2 in float32 from ``vector`` to each row of ``stored``, all at once; bit for bit what a
    sum per row gives. ``stored`` is left as it is (it may be read-only)."""
    diff = np.subtract(stored, vector, dtype=np.float32)
    squares = np.multiply(diff, diff, out=diff)
    return cast(list[float], np.add.reduce(squares, axis=1, dtype=np.float32).tolist())

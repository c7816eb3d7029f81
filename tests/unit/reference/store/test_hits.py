"""Engine replies as candidates (``reference.store._hits``) and the query vector as sent: the fast paths
give exactly what validating each value gives, and bad values fail as they always did."""

from __future__ import annotations

import math
import struct

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from pydantic import TypeAdapter

from reference import Candidate
from reference.store._hits import candidates
from reference.store._schema import ABSENT
from reference.store._vectors import checked_array, prepared_query

ANY_FLOAT = st.floats(-5, 5) | st.sampled_from([math.inf, -math.inf, math.nan, 1e308])
entities = st.fixed_dictionaries(
    {
        "doc_id": st.sampled_from(["a", "b#1", ""]) | st.integers(0, 2),
        "chunk_index": st.integers(-1, 3) | st.sampled_from([True, 2.0]),
        "text": st.sampled_from(["", "refund"]) | st.none(),
        "category": st.sampled_from(["billing", ABSENT, None]) | st.integers(0, 1),
        "source_type": st.sampled_from(["faq", ABSENT, None]),
    }
)


def validated(entities, scores, label, distances):
    """What the store gave before its fast path: each candidate validated, first bad one named."""
    rows = [
        {
            "docId": e["doc_id"],
            "chunkIndex": int(e["chunk_index"]),
            "text": e["text"],
            "originalRank": rank,
            "score": float(score),
            "scoreLabel": label,
            "rawScore": float(score),
            "denseDistance": None if distances is None else distances[rank - 1],
            "category": None if e["category"] == ABSENT else e["category"],
            "sourceType": None if e["source_type"] == ABSENT else e["source_type"],
        }
        for rank, (e, score) in enumerate(zip(entities, scores, strict=True), start=1)
    ]
    return TypeAdapter(list[Candidate]).validate_python(rows)


def outcome(make, *args):
    try:
        made = make(*args)
    except Exception as exc:  # the comparison is of the error's type and message
        return type(exc), str(exc)
    return [(c.model_dump(), c.model_fields_set) for c in made]


@given(st.lists(entities, max_size=5), st.data())
def test_candidates_are_what_validating_each_gives(hits, data) -> None:
    n = len(hits)
    good = data.draw(st.booleans())  # half the examples: a clean reply, the fast path's case
    if good:
        hits = [{**h, "doc_id": "d", "chunk_index": 1, "text": "t", "category": None} for h in hits]
    floats = st.floats(0, 5) if good else ANY_FLOAT
    scores = data.draw(st.lists(floats, min_size=n, max_size=n))
    distances = data.draw(st.none() | st.lists(floats, min_size=n, max_size=n))
    label = data.draw(st.sampled_from(["dense", "hybrid"]))
    assert outcome(candidates, hits, scores, label, distances) == outcome(
        validated, hits, scores, label, distances
    )


def test_absent_category_reads_as_none_on_the_fast_path() -> None:
    hit = {"doc_id": "d", "chunk_index": 0, "text": "t", "category": ABSENT, "source_type": ABSENT}
    [made] = candidates([hit], [0.5], "hybrid", [0.25])
    assert (made.category, made.source_type, made.dense_distance) == (None, None, 0.25)


# -- the query vector ---------------------------------------------------------------------------------


@pytest.mark.filterwarnings("ignore:overflow encountered in cast:RuntimeWarning")  # numpy, on 1e39
@pytest.mark.parametrize(
    "vector",
    [
        [0.1, 0.2, 0.3, 1 / 3],
        (1, 2.5, 3, True),
        np.array([1.0, 2.0, 3.0, 4.0]),
        [3e38, 3e38, 0.0, 0.0],
        [1e39, 0.0, 0.0, 0.0],
        [math.nan, 0.0, 0.0, 0.0],
        [math.inf, 0.0, 0.0, 0.0],
        [1.0, 2.0, 3.0],
        [[1.0], [2.0], [3.0], [4.0]],
        ["a", "b", "c", "d"],
    ],
)
def test_the_query_vector_is_checked_and_sent_as_numpy_reads_it(vector) -> None:
    try:
        expected = checked_array(vector, 4, "c")
    except Exception as exc:
        with pytest.raises(type(exc), match=str(exc).replace("(", r"\(").replace(")", r"\)")):
            prepared_query(vector, 4, "c")
        return
    array, sent = prepared_query(vector, 4, "c")
    assert array.dtype == np.float32
    assert np.array_equal(array, expected)
    # pymilvus packs what it is sent to float32: the engine gets the vector the distances use.
    assert struct.pack("4f", *sent) == expected.tobytes()


class _Floats:
    """A stand-in for a reply's ``FloatArray``: its floats and the bytes it serializes to."""

    def __init__(self, data: list[float], wire: bytes) -> None:
        self.data, self.wire = data, wire

    def SerializeToString(self) -> bytes:
        return self.wire


def _packed(values: list[float]) -> bytes:
    body = struct.pack(f"<{len(values)}f", *values)
    length, varint = len(body), bytearray()
    while True:
        varint.append((length & 0x7F) | (0x80 if length > 0x7F else 0))
        length >>= 7
        if not length:
            break
    return b"\x0a" + bytes(varint) + body


@given(
    rows=st.integers(0, 40),
    dim=st.integers(1, 40),
    first=st.integers(0, 5),
    count=st.integers(0, 45),
)
def test_reply_vectors_read_from_the_wire_equal_the_converted_field(rows, dim, first, count) -> None:
    from reference.store._hits import _packed_rows

    values = np.arange(rows * dim, dtype=np.float32).tolist()
    expected = np.asarray(values, dtype=np.float32).reshape(-1, dim)[first : first + count]
    packed = _packed_rows(_Floats(values, _packed(values)), first, count, dim)
    unpacked_wire = b"".join(b"\x0d" + struct.pack("<f", v) for v in values)  # not one packed run
    converted = _packed_rows(_Floats(values, unpacked_wire), first, count, dim)
    assert np.array_equal(converted, expected)
    assert converted.dtype == np.float32
    if (first + count) <= rows:  # the wire holds every row asked for
        assert np.array_equal(packed, expected)
        assert packed.shape == (count, dim)
    else:  # fewer rows than asked: the caller sees it and reads the hits one by one
        assert np.array_equal(packed, expected)
        assert len(packed) < max(count, 1)


def test_reply_vectors_of_a_ragged_field_are_no_rows() -> None:
    from reference.store._hits import _packed_rows

    values = [1.0, 2.0, 3.0]
    assert _packed_rows(_Floats(values, b"\x0d"), 0, 1, 2).shape == (0, 2)

"""The catalogue of hostile values, by the TYPE of field that carries them, written once (issue 51).

Naming deciding values one by one did not converge: each fresh set of faulty programs passed through a
value no run sent. So the kit keeps, for each kind of field the protocol carries (identifiers,
categories, free text, distances and scores, settings and thresholds, counts and ranks, vectors, and
optional fields), the classes of values that break real code in any language, and every field of every
request and stored chunk draws every class of its type on every run: the pure capabilities through
``conformance/scenarios/_hostile_examples.py``, search and lookup through the knowledge base's hostile
part (:mod:`._hostile_part`). Which field has which type is read from the protocol's own pydantic
models (:func:`field_types`): a field added to the protocol gets its cells without anyone writing a
case, and ``tests/unit/conformance/scenarios/test_hostile_matrix.py`` fails on every cell no run draws.

The classes follow what the field already keeps, referenced, not copied: the Big List of Naughty
Strings (minimaxir/big-list-of-naughty-strings: quotes, backslashes, SQL and LIKE metacharacters,
JavaScript's built-in property names, Unicode compatibility and combining characters), Hypothesis's
``st.floats`` edge values (subnormals, signed zeros, float32 roundings with ``width=32``), ECMAScript's
Number::toString (test262: exponent form below 1e-6 and from 1e21) and Java's Double.toString (below
1e-3 and from 1e7), and Unicode's normalization forms (UAX #15: NFC/NFD, NFKC compatibility characters).

Every value is one the spec defines an answer for: ids and categories stay under 64 characters and texts
under 240 bytes (readings 21), categories never differ from one another only in case, accents or
compatibility form (matching those alike is not forbidden: readings 21), distances are non-negative.
A class a type cannot carry under those rules says why (``reason``) and has no cell.
"""

from __future__ import annotations

import math
import struct
import unicodedata
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from ._hostile_fields import FIELD_TYPES, REQUEST_MODELS, FieldSpec, FieldType, field_types

__all__ = [
    "BUILT_IN_NAMES",
    "CATALOGUE",
    "DECADES",
    "FIELD_TYPES",
    "REQUEST_MODELS",
    "SIBLINGS",
    "TIE_DECADES",
    "FieldSpec",
    "FieldType",
    "HostileClass",
    "applies_to",
    "bounds_of",
    "class_values",
    "classes_of",
    "exponent_form",
    "field_types",
    "float32",
]

Groups = Sequence[Sequence[Any]]
"""What a field drew on one run: one group of values per request (a batch's candidates are one group)."""


@dataclass(frozen=True)
class HostileClass:
    """One class of hostile values for one type of field.

    ``values`` are what the generators put in the field (pairs: two values that go into one request);
    ``drawn`` tells, from the values a run's requests hold in the field (grouped per request), whether
    the class is there. ``reason`` (no values): why the type cannot carry the class.
    """

    type: FieldType
    name: str
    values: tuple[Any, ...]
    drawn: Callable[[Groups], bool] | None = None
    reason: str = ""
    pairs: bool = False  # values are pairs, each pair in one request

    @property
    def applies(self) -> bool:
        return not self.reason


# -- strings ------------------------------------------------------------------------------------------

BUILT_IN_NAMES = ("constructor", "__proto__", "toString", "hasOwnProperty", "__class__", "valueOf")
"""Names a plain JavaScript object (or a Python class) already answers: a map keyed by them is wrong."""

_LONG_ID = "a-very-long-identifier-" + "x" * 38 + "-z"  # 63 characters: ids stay under 64 (readings 21)
_LONG_TEXT = ("long text " * 23).strip() + " end"  # 238 bytes: texts stay under 240 (readings 21)


def _all(values: Iterable[Any]) -> list[Any]:
    return [v for v in values if v is not None]


def _flat(groups: Groups) -> list[Any]:
    out: list[Any] = []
    for group in groups:
        for value in group:
            if isinstance(value, tuple) and value and isinstance(value[0], str):
                out.extend(value)  # a list of terms: each term is a value of the field
            else:
                out.append(value)
    return _all(out)


def _strings(groups: Groups) -> list[str]:
    return [v for v in _flat(groups) if isinstance(v, str)]


def _any(test: Callable[[str], bool]) -> Callable[[Groups], bool]:
    return lambda groups: any(test(v) for v in _strings(groups))


def _twins_in_one(key: Callable[[str], str]) -> Callable[[Groups], bool]:
    """Two different values of one request that ``key`` makes equal."""

    def drawn(groups: Groups) -> bool:
        for group in groups:
            seen: dict[str, str] = {}
            for value in (v for v in group if isinstance(v, str)):
                k = key(value)
                if k in seen and seen[k] != value:
                    return True
                seen.setdefault(k, value)
        return False

    return drawn


def _compat(v: str) -> bool:
    return unicodedata.normalize("NFKC", v) != unicodedata.normalize("NFC", v)


def _combining(v: str) -> bool:
    """Combining marks that stay combining under NFC (no precomposed form takes them in)."""
    return any(unicodedata.combining(ch) for ch in unicodedata.normalize("NFC", v))


def _nfd_only(v: str) -> bool:
    return unicodedata.normalize("NFC", v) != v


def _nfd_alone(groups: Groups) -> bool:
    """A decomposed value whose composed form is not in the same request."""
    for group in groups:
        values = set(_strings([group]))
        if any(_nfd_only(v) and unicodedata.normalize("NFC", v) not in values for v in values):
            return True
    return False


_NO_TWINS = (
    "categories never differ only in case, accents or compatibility form: matching those alike is not "
    "forbidden (readings 21)"
)


# Texts are searched by words: their values fold (NFKC, accents stripped, case-folded) to words no other
# text or question holds, under any analyzer. Ids and categories are never tokenized.
_COMPAT = {
    "text": "\uff2b\uff42 \u2116 \ufb01les \uff5a\uff45\uff4e",
    "name": "\uff2b\uff42 \u2460 \u2116 \ufb01les",
}
_MARKS = {"text": "zalgo\u0324\u0354 glyphs\u0367\u0311", "name": "Z\u0324\u0354\u0367\u0311algo"}
_NFD = {"text": "Cre\u0300me Bru\u0302le\u0301e", "name": "Cafe\u0301 Me\u0301nu"}


def _string_classes(kind: FieldType, *, long: str, empty: bool) -> tuple[HostileClass, ...]:
    twins = kind == "identifier"
    form = "text" if kind == "free text" else "name"
    return (
        HostileClass(kind, "case-only twins", (("Report-A", "report-a"),) if twins else (),
                     _twins_in_one(str.casefold), "" if twins else _NO_TWINS, pairs=twins),
        HostileClass(kind, "NFC/NFD twins", (("caf\u00e9", "cafe\u0301"),) if twins else (),
                     _twins_in_one(lambda v: unicodedata.normalize("NFC", v)), "" if twins else _NO_TWINS,
                     pairs=twins),
        HostileClass(kind, "NFD only (decomposed, no composed twin)", (_NFD[form],), _nfd_alone),
        HostileClass(kind, "compatibility and full-width characters", (_COMPAT[form],), _any(_compat)),
        HostileClass(kind, "combining marks", (_MARKS[form],), _any(_combining)),
        HostileClass(kind, "a double quote", ('say "cheese"',), _any(lambda v: '"' in v)),
        HostileClass(kind, "a single quote", ("O'Reilly's",), _any(lambda v: "'" in v)),
        HostileClass(kind, "a backslash", ("C:\\temp\\new",), _any(lambda v: "\\" in v)),
        HostileClass(kind, "`%` and `_`", ("50% off_sale",), _any(lambda v: "%" in v and "_" in v)),
        HostileClass(kind, "a newline", ("line\nbreak",), _any(lambda v: "\n" in v)),
        HostileClass(kind, "edge spaces", ("  spaced out ",), _any(lambda v: v != v.strip() and v.strip())),
        HostileClass(kind, "built-in property names", BUILT_IN_NAMES,
                     lambda groups: set(BUILT_IN_NAMES) <= set(_strings(groups))),
        HostileClass(kind, "empty", ("",) if empty else (), _any(lambda v: v == ""),
                     "" if empty else (
                         "an id names a document; an empty one names none" if kind == "identifier" else
                         "an empty category is how engines without nullable fields store none "
                         "(readings 21); the protocol keeps it apart only as null"
                     )),
        HostileClass(kind, "very long", (long,), _any(lambda v: len(v.encode()) >= len(long.encode()) - 8)),
    )  # fmt: skip


# -- numbers ------------------------------------------------------------------------------------------

DECADES = tuple(10.0**k for k in range(-12, 13))
"""Every decade from 1e-12 to 1e12."""
TIE_DECADES = tuple(10.0**k for k in range(-9, -2))
"""Pairs of values this far apart, 1e-9 to 1e-3: a key rounded to some digits makes them one."""


def float32(value: float) -> float:
    """``value`` rounded to float32 and read back as a double (what an engine storing float32 returns)."""
    return struct.unpack("f", struct.pack("f", value))[0]


def exponent_form(value: float) -> bool:
    """Whether JavaScript (below 1e-6, from 1e21) or Java (below 1e-3, from 1e7) prints it with an
    exponent: text comparisons of such numbers order them wrongly."""
    a = abs(value)
    return a != 0.0 and (a < 1e-3 or a >= 1e7)


_SUBNORMALS = (5e-324, 2.0**-1040)
_EXPONENT = (5e-7, 1.5e-5, 2.5e-4, 3e7)


def _numbers(groups: Groups) -> list[float]:
    return [float(v) for v in _flat(groups) if isinstance(v, int | float) and not isinstance(v, bool)]


def _has(values: Iterable[float]) -> Callable[[Groups], bool]:
    wanted = tuple(values)

    def drawn(groups: Groups) -> bool:
        got = set(_numbers(groups))
        return all(w in got for w in wanted)

    return drawn


def _neg_zero(groups: Groups) -> bool:
    return any(v == 0.0 and math.copysign(1.0, v) < 0 for v in _numbers(groups))


def _ties(groups: Groups) -> bool:
    """A pair in one request this far apart, for every tie decade."""
    found: set[float] = set()
    for group in groups:
        nums = sorted({float(v) for v in group if isinstance(v, int | float) and v is not None})
        for i, a in enumerate(nums):
            for b in nums[i + 1 :]:
                if b - a > 2 * TIE_DECADES[-1]:
                    break
                found.update(gap for gap in TIE_DECADES if abs((b - a) - gap) <= gap * 1e-3)
    return found >= set(TIE_DECADES)


_TIE_PAIRS = tuple((0.3 + 0.05 * i, 0.3 + 0.05 * i + gap) for i, gap in enumerate(TIE_DECADES))


def _decade_qualities(groups: Groups) -> bool:
    """Distances whose dense quality under maxL2Distance 2.0 lies at every decade 1e-12..1e-1 (qualities
    that print in exponent form beside 0.9)."""
    qualities = {1.0 - v / 2.0 for v in _numbers(groups) if 0.0 <= v < 2.0}
    return all(any(abs(q - 10.0**k) <= 10.0**k * 1e-3 for q in qualities) for k in range(-12, 0))


def _distance_classes() -> tuple[HostileClass, ...]:
    t: FieldType = "distance or score"
    near_max = tuple(2.0 * (1.0 - 10.0**k) for k in range(-12, 0))
    return (
        HostileClass(t, "every decade 1e-12..1e12", DECADES, _has(DECADES)),
        HostileClass(t, "float32 roundings of every decade", tuple(map(float32, DECADES)),
                     _has(map(float32, DECADES))),
        HostileClass(t, "subnormals", _SUBNORMALS, _has(_SUBNORMALS)),
        HostileClass(t, "-0.0", (-0.0,), _neg_zero),
        HostileClass(t, "printed in exponent form by JavaScript or Java", _EXPONENT, _has(_EXPONENT)),
        HostileClass(t, "qualities at every decade (distances just under maxL2Distance)", near_max,
                     _decade_qualities),
        HostileClass(t, "ties at every decade 1e-9..1e-3 (pairs)",
                     _TIE_PAIRS, _ties, pairs=True),
    )  # fmt: skip


SETTING_BOUNDS: dict[str, tuple[float, ...]] = {
    "max_l2_distance": (1e-6, 1e-3, 0.01, 0.04, 1e3, 1e6),  # below 0.05, and huge
    "highly_relevant_threshold": (0.0, 1e-7, 0.5, 1.0),
    "reference_threshold": (0.0, 1e-7, 0.5, 1.0),
}
"""Each setting's bounds and the values where floors, caps and defaults show. A setting not named here
draws its type's default bounds (:data:`_DEFAULT_SETTING`)."""
_DEFAULT_SETTING = (0.0, 1e-7, 1.0, 1e6)

COUNT_BOUNDS: dict[str, tuple[int, ...]] = {
    "chunk_index": (0, 1, 99_999),
    "original_rank": (1, 1_000),
    "batch_size": (1, 1_000_000),
    "return_n": (1, 1_000),
    "max_chunks_per_document": (1, 1_000),
    "k": (1, 100),
    "retrieve_k": (1, 100),
    "rrf_k": (1, 10_000),
}
"""Each count's bounds: its smallest value and a large one (a count not named here draws 1 and 1000)."""
_DEFAULT_COUNT = (1, 1_000)


def bounds_of(field: str, kind: FieldType) -> tuple[Any, ...]:
    if kind == "setting":
        return SETTING_BOUNDS.get(field, _DEFAULT_SETTING)
    return COUNT_BOUNDS.get(field, _DEFAULT_COUNT)


def _bounds_class(kind: FieldType) -> HostileClass:
    # Values depend on the field (bounds_of); ``drawn`` is bound per field by :func:`cell_drawn`.
    return HostileClass(kind, "at its bounds", ())


# -- vectors and optional fields -------------------------------------------------------------------------


def _norms(groups: Groups) -> list[float]:
    return [math.sqrt(sum(x * x for x in v)) for v in _flat(groups) if isinstance(v, tuple) and v]


def _duplicates(groups: Groups) -> bool:
    vectors = [v for v in _flat(groups) if isinstance(v, tuple) and v]
    return len(vectors) != len(set(vectors))


_VECTOR_CLASSES = (
    HostileClass("vector", "other lengths than 1", (0.5, 1.75),
                 lambda g: any(abs(n - 1.0) > 0.1 for n in _norms(g))),
    HostileClass("vector", "duplicates", (), _duplicates),
)  # fmt: skip

SIBLINGS: dict[str, str] = {"raw_score": "score"}
"""Optional fields with a sibling a program may read in their place: rawScore beside score."""


def _optional_classes() -> tuple[HostileClass, ...]:
    t: FieldType = "optional"
    return (
        HostileClass(t, "null", (None,), lambda groups: any(v is None for g in groups for v in g)),
        HostileClass(t, "a value", (), lambda groups: any(v is not None for g in groups for v in g)),
        HostileClass(t, "absent", (), reason="the request schema has every field, null where a value is "
                     "absent (docs/stdio-protocol.md): absent and null are one request"),
    )  # fmt: skip


def _sibling_classes() -> tuple[HostileClass, ...]:
    # Bound per field by cell_drawn: the groups are (value, sibling) pairs.
    return (
        HostileClass("optional", "equal to its sibling", (),
                     lambda groups: any(v is not None and v == s for g in groups for v, s in g)),
        HostileClass("optional", "different from its sibling", (),
                     lambda groups: any(None not in (v, s) and v != s for g in groups for v, s in g)),
    )  # fmt: skip


CATALOGUE: tuple[HostileClass, ...] = (
    *_string_classes("identifier", long=_LONG_ID, empty=False),
    *_string_classes("category", long=_LONG_ID, empty=False),
    *_string_classes("free text", long=_LONG_TEXT, empty=True),
    *_distance_classes(),
    _bounds_class("setting"),
    HostileClass(
        "setting", "every decade of a distance setting (maxL2Distance 1e-12..1e12)", DECADES, _has(DECADES)
    ),
    _bounds_class("count or rank"),
    *_VECTOR_CLASSES,
    *_optional_classes(),
    *_sibling_classes(),
)
"""Every class, by type, in the order the page lists them."""


FIELD_EXCEPTIONS: dict[tuple[str, str], str] = {
    ("chunks.text", "empty"): "a chunk with no text can never be found by its words: an implementation may "
    "refuse to store it (the reference does); empty questions and hints are asked",
}
"""Cells a field cannot carry though its type can, by (field path, class name), and why."""


def applies_to(hostile: HostileClass, path: str, *, listed: bool) -> bool:
    """Whether the field at ``path`` draws ``hostile`` (pairs only in lists; the exceptions never)."""
    return hostile.applies and (listed or not hostile.pairs) and (path, hostile.name) not in FIELD_EXCEPTIONS


def classes_of(kind: FieldType, field: str = "") -> tuple[HostileClass, ...]:
    """The classes a field of ``kind`` draws (a setting's decades: distance settings only)."""
    out = []
    for c in CATALOGUE:
        if c.type != kind:
            continue
        if c.name.startswith("every decade of a distance setting") and "distance" not in field:
            continue
        if c.name in ("equal to its sibling", "different from its sibling") and field not in SIBLINGS:
            continue
        out.append(c)
    return tuple(out)


def class_values(path: str, kinds: Sequence[FieldType], *, listed: bool) -> list[tuple[Any, ...]]:
    """The values the catalogue holds for a field of these types, class by class (pairs as pairs only
    where the field is listed, bounds by field); classes without values of their own are left out."""
    name = path.rsplit(".", 1)[-1]
    out = []
    for kind in kinds:
        for hostile in classes_of(kind, name):
            if not applies_to(hostile, path, listed=listed):
                continue
            values = bounds_of(name, hostile.type) if hostile.name == "at its bounds" else hostile.values
            if values:
                out.append(tuple(values))
    return out

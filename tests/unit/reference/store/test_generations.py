"""Which hits a reply keeps while a document is stored in two generations, and the filters that write
and delete them: pure functions, no engine."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from reference.store._hits import current_rows
from reference.store._schema import doc_filter, quoted


def hit(doc: str, generation: int) -> dict[str, object]:
    return {"doc_id": doc, "generation": generation}


def test_one_generation_per_document_keeps_every_hit() -> None:
    assert current_rows([hit("a", 5), hit("b", 9), hit("a", 5)]) is None
    assert current_rows([]) is None


def test_two_generations_keep_the_oldest_of_each_document_in_engine_order() -> None:
    hits = [hit("a", 7), hit("b", 2), hit("a", 5), hit("b", 2), hit("a", 7), hit("c", 1)]
    assert current_rows(hits) == [1, 2, 3, 5]


@given(st.lists(st.tuples(st.sampled_from("abc"), st.integers(1, 3)), max_size=30))
def test_a_kept_reply_never_holds_two_generations_of_a_document(pairs: list[tuple[str, int]]) -> None:
    hits = [hit(d, g) for d, g in pairs]
    kept = current_rows(hits)
    rows = hits if kept is None else [hits[i] for i in kept]
    generations: dict[object, set[object]] = {}
    for row in rows:
        generations.setdefault(row["doc_id"], set()).add(row["generation"])
    assert all(len(g) == 1 for g in generations.values())
    # every document in the reply stays in it, with its oldest generation
    assert set(generations) == {d for d, _ in pairs}
    assert {d: min(g for e, g in pairs if e == d) for d in generations} == {
        d: next(iter(g)) for d, g in generations.items()
    }
    assert kept is None or kept == sorted(kept)


@pytest.mark.parametrize(
    ("value", "literal"),
    [
        ("plain", '"plain"'),
        ('say "hi"', r'"say \"hi\""'),
        ("back\\slash", r'"back\\slash"'),
        ("line\nbreak", r'"line\nbreak"'),
    ],
)
def test_quoted_escapes_what_would_end_the_literal(value: str, literal: str) -> None:
    assert quoted(value) == literal


def test_doc_filter_names_the_documents_and_spares_the_new_generation() -> None:
    assert doc_filter(["a", 'b"']) == 'doc_id in ["a", "b\\""]'
    assert doc_filter(["a"], except_generation=42) == 'doc_id in ["a"] and generation != 42'


def test_commit_groups_hold_every_document_once_within_both_limits(monkeypatch: pytest.MonkeyPatch) -> None:
    from reference.store import _writes

    monkeypatch.setattr(_writes, "_COMMIT_GROUP", 3)
    monkeypatch.setattr(_writes, "_COMMIT_BYTES", 40)
    docs = ["a", "b", "c", "d", "x" * 30, "e", "é" * 20]
    groups = list(_writes._groups(docs))
    assert [d for g in groups for d in g] == docs
    # three documents at most; 40 bytes at most (a docId costs its UTF-8 bytes and 4), unless alone
    assert groups == [["a", "b", "c"], ["d", "x" * 30], ["e"], ["é" * 20]]

"""The one validator of labelled sets: a set built in code meets the readers' rules, and the bundled set
reads the same in both formats (broken sets, one fault each: ``test_broken_sets.py``; warnings:
``test_set_warnings.py``)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

import evaluation
from evaluation import LabelledSetError, load_beir_set, load_jsonl_set, write_beir


def test_a_set_built_in_code_is_held_to_the_same_rules() -> None:
    bundled = load_jsonl_set()
    doubled = bundled.model_copy(update={"queries": (*bundled.queries, bundled.queries[0])})
    with pytest.raises(LabelledSetError, match="query id 'q001' is used twice"):
        evaluation.validate_set(doubled)
    spaced = bundled.model_copy(update={"queries": (bundled.queries[0].model_copy(update={"id": "q 1"}),)})
    with pytest.raises(LabelledSetError, match="query id 'q 1' holds whitespace"):
        evaluation.validate_set(spaced)
    assert evaluation.validate_set(bundled) is bundled


@pytest.mark.parametrize(
    ("change", "words"),
    [
        ({"query": " "}, "query 'q001': the text is empty"),
        ({"query": "reset \udc80"}, "query 'q001': the text holds an unpaired surrogate (\\udc80)"),
    ],
)
def test_a_query_built_in_code_meets_the_readers_text_rules(change: dict[str, str], words: str) -> None:
    bundled = load_jsonl_set()
    broken = (bundled.queries[0].model_copy(update=change), *bundled.queries[1:])
    with pytest.raises(LabelledSetError, match=re.escape(words)) as caught:
        evaluation.validate_set(bundled.model_copy(update={"queries": broken}))
    assert caught.value.item_id == "q001"
    assert caught.value.source == bundled.queries_source


def test_a_set_built_in_code_with_no_answerable_query_is_refused() -> None:
    bundled = load_jsonl_set()
    unanswerable = tuple(q for q in bundled.queries if not q.relevant)
    with pytest.raises(LabelledSetError, match=r"queries.jsonl: no query has a relevant document"):
        evaluation.validate_set(bundled.model_copy(update={"queries": unanswerable}))


def test_the_bundled_set_reads_the_same_in_both_formats(tmp_path: Path) -> None:
    jsonl, beir = load_jsonl_set(), load_beir_set(evaluation.bundled_beir_path())
    assert jsonl.queries == beir.queries
    assert [c.evidence_key for c in jsonl.corpus] == [c.evidence_key for c in beir.corpus]
    again = load_beir_set(write_beir(jsonl, tmp_path / "copy"))
    assert again.queries == jsonl.queries

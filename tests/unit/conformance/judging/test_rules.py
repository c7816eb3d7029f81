"""Every rule of the model cites the words it enforces, and the readings page lists them all."""

from __future__ import annotations

import importlib.util
import re
from pathlib import Path

import pytest

from conformance.judging._spec_model import REQUIREMENT_NUMBERS, RULES

ROOT = Path(__file__).resolve().parents[4]
SPEC = (ROOT / "features" / "spec" / "rag-retrieval-quality-score.md").read_text(encoding="utf-8")
READINGS = (ROOT / "features" / "spec" / "readings.md").read_text(encoding="utf-8")


def _flat(text: str) -> str:
    return " ".join(text.split())


@pytest.mark.parametrize("rule", RULES.values(), ids=lambda r: r.id)
def test_a_rule_quotes_the_pinned_spec_verbatim(rule) -> None:
    for fragment in rule.cites:
        assert _flat(fragment) in _flat(SPEC), f"{rule.id} cites words the spec does not have: {fragment!r}"


@pytest.mark.parametrize("rule", RULES.values(), ids=lambda r: r.id)
def test_a_failing_rule_rests_on_the_spec_or_the_design_note(rule) -> None:
    if rule.fails:
        assert rule.cites or rule.design_note, f"{rule.id} fails replies but cites no words: make it a note"
    else:
        assert not rule.cites, f"{rule.id} is a note but cites the spec: a sentence forbids it, so it fails"
    assert rule.requirement in REQUIREMENT_NUMBERS


def test_every_reading_a_rule_names_is_on_the_page() -> None:
    sections = {int(n) for n in re.findall(r"(?m)^## (\d+)\. ", READINGS)}
    missing = {r.id: r.reading for r in RULES.values() if r.reading and r.reading not in sections}
    assert not missing, f"rules name readings the page does not have: {missing}"


def test_the_readings_page_lists_every_rule_with_its_words() -> None:
    spec = importlib.util.spec_from_file_location("rules_table", ROOT / "docs" / "rules_table.py")
    assert spec
    assert spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    assert module.section() in READINGS, "the rules changed: run `python docs/rules_table.py --write`"
    for rule in RULES.values():
        assert f"| `{rule.id}` |" in READINGS


def test_every_rule_is_checked_somewhere() -> None:
    code = "\n".join(p.read_text(encoding="utf-8") for p in (ROOT / "conformance").rglob("*.py"))
    unused = [r for r in RULES if f'"{r}"' not in code.replace(f'_rule("{r}"', "")]
    assert not unused, f"rules no check names: {unused}"


def test_the_label_rule_quotes_the_label_sentences_not_the_normalizers() -> None:
    """canonicalize_label's rule once cited alias-quality's sentence on quality normalization, so a
    label failure quoted the normalizer's words."""
    normalizer = _flat(RULES["alias-quality"].cites[0])
    assert RULES["canonical-label"].cites
    for fragment in RULES["canonical-label"].cites:
        assert _flat(fragment) not in normalizer, fragment


def test_a_then_steps_own_check_names_no_reply_it_did_not_ask() -> None:
    from conformance.judging._spec_model import violation

    text = str(violation("canonical-label", "label 'rrf_fused'", "'hybrid'", "'rrf_fused'").fail())
    assert text.startswith("[R1 score-labels: canonical-label] label 'rrf_fused': expected 'hybrid'")
    assert "reply" not in text.splitlines()[0]

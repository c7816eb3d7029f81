"""The knowledge base's hostile part (issue 51): its chunks leave the scenario questions' answers alone,
its texts are found alone by their words, and its tie pairs lie every decade apart, docIds against order.
"""

from __future__ import annotations

import re
import unicodedata

import numpy as np
import pytest

from conformance.corpus._hostile_part import LONGER, TIE_GAPS
from conformance.corpus._scenario_corpus import build_corpus

SEEDS = (0, 1, 2**32 - 1)


@pytest.fixture(scope="module", params=SEEDS)
def corpus(request: pytest.FixtureRequest):  # type: ignore[no-untyped-def]
    return build_corpus(seed=request.param)


def test_the_tie_pairs_lie_every_decade_apart_with_docids_against_their_order(corpus) -> None:  # type: ignore[no-untyped-def]
    kb = corpus.knowledge_base
    q = np.asarray(kb.tie_question, dtype=np.float32)
    chunks = {c.doc_id: np.asarray(c.vector, dtype=np.float32) for c in kb.hostile}
    for k, gap in enumerate(TIE_GAPS):
        near, far = (float(((chunks[f"tie-{k}-{s}"] - q) ** 2).sum()) for s in ("z", "a"))
        if gap >= 1e-5:  # float32 tells these apart; below, they are the engine's ties
            assert far - near == pytest.approx(gap, rel=0.05), (k, near, far)
        assert f"tie-{k}-a" < f"tie-{k}-z"  # the farther one sorts first by docId


def test_the_hostile_part_stays_further_from_every_scenario_question_than_the_scenario_chunks(corpus) -> None:  # type: ignore[no-untyped-def]
    kb = corpus.knowledge_base
    scenario = [c for c in corpus.corpus.chunks if c not in kb.chunks]
    for question in corpus.queries.values():
        q = np.asarray(question.vector)
        farthest = max(float(((np.asarray(c.vector) - q) ** 2).sum()) for c in scenario)
        nearest = min(float(((np.asarray(c.vector) - q) ** 2).sum()) for c in kb.hostile)
        assert nearest > farthest, question.name


def test_some_stored_vectors_are_longer_than_unit(corpus) -> None:  # type: ignore[no-untyped-def]
    norms = [float(np.linalg.norm(c.vector)) for c in corpus.knowledge_base.hostile]
    assert any(n == pytest.approx(LONGER) for n in norms)


def _folded(text: str) -> set[str]:
    """The words of ``text`` as the most folding analyzer sees them: NFKC, accents stripped, case-folded."""
    plain = "".join(ch for ch in unicodedata.normalize("NFKD", text) if not unicodedata.combining(ch))
    return {w.casefold() for w in re.findall(r"\w+", unicodedata.normalize("NFKC", plain))}


def test_each_hostile_text_is_the_only_text_holding_its_words_however_folded(corpus) -> None:  # type: ignore[no-untyped-def]
    texts = [c.text for c in corpus.corpus.chunks]
    questions = [q.text for q in corpus.knowledge_base.queries] + [q.text for q in corpus.queries.values()]
    for chunk in corpus.knowledge_base.hostile:
        words = _folded(chunk.text)
        others = [t for t in texts + questions if t != chunk.text and words & _folded(t)]
        assert not others, (chunk.text, others[:3])

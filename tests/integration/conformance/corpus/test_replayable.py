"""A seed replays the same run in every process: the corpus, the knowledge base, its explicit questions and
the properties' draws do not depend on the interpreter's string hashes (``PYTHONHASHSEED``), which differ
from process to process. Seen when a knowledge base's vocabulary came out of a set: the same seed gave
other query words in another process, and a failure printed with "replay: --seed N" did not replay.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[4]

_DIGEST = """
import hashlib
from hypothesis import given, seed, settings, HealthCheck
from conformance.corpus._explicit_requests import explicit_lookups, explicit_searches
from conformance.corpus._scenario_corpus import build_corpus
from conformance.scenarios import _strategies as gen

run = build_corpus(seed=20260728)
kb = run.knowledge_base
parts = [repr(run), repr(explicit_searches(kb)), repr(explicit_lookups(kb))]

@settings(max_examples=15, database=None, derandomize=False, suppress_health_check=list(HealthCheck))
@seed(20260728)
@given(gen.kb_lookup_requests(kb), gen.kb_search_requests(kb))
def draw(lookup, search):
    parts.append(repr((lookup, search)))

draw()
print(hashlib.sha256("\\n".join(parts).encode()).hexdigest())
"""


def _digest(hash_seed: str) -> str:
    env = {**os.environ, "PYTHONHASHSEED": hash_seed}
    done = subprocess.run(
        [sys.executable, "-c", _DIGEST], cwd=ROOT, env=env, capture_output=True, text=True, check=False
    )
    assert done.returncode == 0, done.stderr[-3000:]
    return done.stdout.strip()


def test_the_same_seed_gives_the_same_corpus_questions_and_draws_whatever_the_string_hashes() -> None:
    assert _digest("1") == _digest("2") == _digest("31337")

"""Miniatures: tiny implementations that show the kit has teeth (house style, convention 7).

- :mod:`.broken` (and :mod:`.broken_store`): each breaks ONE thing the spec requires.
- :mod:`.legacy`: the design note's legacy pipeline, all of its section 2 at once.
- :mod:`.conforming`: variants that differ from the reference only where the spec allows.
- written apart from the kit, from the spec's sentences: :mod:`.from_the_spec` (a whole implementation),
  :mod:`.spec_freedoms` (conforming variants of it) and :mod:`.spec_faults` (one fault each, by why a
  kit might miss it; a few of them turned out to break only the protocol's shapes, and are noted).
- :mod:`.real_data`: faults only a knowledge base like a real team's shows.
- :mod:`.input_classes`: faults only one class of input shows (every run now draws each), and a cache;
  :mod:`.category_filters`: filters built from string literals and partitions.
- :mod:`.rule_freedoms`: the nearest freedom of each rule, and variants the kit only notes.

``matrix.toml`` beside them says which scenarios must catch which miniature; ``rag-conformance
selftest`` and ``tests/integration/test_mutation_matrix.py`` run the kit against all of them and compare.
Every miniature is addressable as an adapter spec, e.g. ``tests.miniatures.broken:UncanonicalAlias``.
"""

from pathlib import Path

__all__ = ["MATRIX_PATH"]

MATRIX_PATH = Path(__file__).with_name("matrix.toml")

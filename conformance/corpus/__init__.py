"""The data the scenarios search: known in advance, so the kit can tell right from wrong.

- ``_scenario_corpus``: the hand-made scenario corpus, its named questions and their advertised orders,
  and :func:`build_corpus`, which adds a run's generated knowledge base beside it.
- ``_knowledge_base``: a knowledge base like a real team's, generated from a run's seed (documents of one
  chunk and of a dozen, category values with spaces, quotes and other scripts, texts in several scripts,
  ties, queries of every shape).
- ``_explicit_requests``: the searches and lookups every run asks first about it, whatever its draws.
- ``_hostile``: hostile values by type of field, written once (docs/hostile-values.md), each class with
  the check that recognises it; ``_hostile_fields``: each protocol field's type, read from the models;
  ``_hostile_part``: the chunks and questions that pack every class into the knowledge base.

Pure data and numpy: no engine, no pytest. The judge's oracle ingests it; the scenarios ask about it.
"""

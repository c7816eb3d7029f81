"""Benchmarks of the reference implementation and the kit: measurements, not tests.

Run ``python -m benchmarks run`` from the repository root; see the README's "Benchmarks" section. This
folder is not shipped in the wheel. It imports the reference, the kit and the legacy miniature.

- ``_cli.py``: the command; ``_report.py``, ``_sections.py`` and ``_peer_section.py``: ``results.json``
  to ``RESULTS.md``; ``_targets.py``: every target, in one place.
- ``_retrieval.py``: lookup, the old lookup, bare calls and the legacy pipeline on one engine and size;
  ``_corpus.py``, ``_legacy.py``, ``_stats.py``, ``_affinity.py``, ``_stages.py``, ``_profile.py`` serve it.
- ``_peers.py``: the peer libraries' hybrid query beside a bare call, each run by ``_peer_child.py`` in
  the library's own venv (``examples/peers/``).
- ``_old_reference/``: the reference's tuned hot path before issue 25, frozen for the old/new figures.
- ``_postprocess.py``: post-process, new and old; ``_conformance.py`` with ``_conftiming.py``: the
  conformance run; ``_stdio.py`` with ``_tiny_stdio.py``: the stdio protocol; ``_machine.py``,
  ``_progress.py``: the machine's facts, progress on stderr.
"""

__all__: list[str] = []

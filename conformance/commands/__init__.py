"""The ``rag-conformance`` command and the library calls behind each of its subcommands: the top layer.

- ``_cli``: the thin CLI; every subcommand imports what it needs lazily; the exit codes in one place.
- ``_runner``: :func:`~conformance.run_conformance`, a thin layer over pytest (``run``).
- ``_selftest``: the mutation matrix over the miniatures (``selftest``); ``_matrix``: the matrix's rows,
  results and table, as data.
- ``_engines``: the engine matrix, one report per engine (``engines``).
- ``_smoke``: a stdio program's handshake and one call per capability, with advice (``smoke``);
  ``_smoke_edges``: the hard inputs a real run may send, and which the program rejects.
- ``_clean``: the collections killed kit runs left on an engine, listed and dropped (``clean``).
- ``_clean_cache``: the engine venvs and images the kit fetched or built, listed and removed
  (``clean --engine-cache``).
- ``_coverage``: every spec scenario transcribed and every step bound, and spec drift (``coverage``).
- ``_diff``: what newly fails between two reports (``diff``), printed; the comparison is the reports'
  (:mod:`conformance.reporting._diff`).
- ``_upgrade``: one engine against another for one implementation (``upgrade``): its options, and the
  result of the check (:mod:`conformance.upgrade`, which runs all of it) printed.
- ``_exits``: how every command ends (an output not written, a signal), the rule of docs/exit-codes.md.

The docs site builder is :mod:`conformance.site` (``docs``); the schema writer is in :mod:`conformance.stdio`.
"""

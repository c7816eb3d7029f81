"""One figure per module or folder, each measuring what its ``RESULTS.md`` section shows.

- ``retrieval``: lookup, the old lookup, bare calls, the legacy pipeline and the peers on one engine
  and size (its corpus, stage timer and peers beside it).
- ``postprocess``: post-process, new and old.
- ``conformance``: the conformance run, whole and broken down.
- ``stdio``: the stdio protocol's cost per call.
- ``old_reference``: the reference's tuned hot path before issue 25, frozen for the old/new figures of
  ``retrieval`` and ``postprocess``.
"""

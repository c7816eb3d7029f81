"""The retrieval figure: ``run`` (lookup, the old lookup, bare calls and the legacy pipeline on one engine
and size), ``corpus`` (the generated corpus and queries), ``legacy`` (the legacy pipeline, timed with its
probe in parallel or in sequence), ``stages`` (the reference's stages, timed from outside), ``peers``
(the peer libraries' hybrid query, each in its own venv)."""

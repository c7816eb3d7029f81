"""``results.json`` to ``RESULTS.md``: ``report`` (the page and the targets' checks), ``sections`` (one
section per figure), ``peers`` (the peer libraries' section)."""

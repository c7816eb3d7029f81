"""Programs a figure starts in another process: ``peer_child`` (a peer library's query, in that peer's
venv), ``tiny_stdio`` (the smallest stdio implementation), ``conftiming`` (a pytest plugin timing the
conformance run's phases). None imports anything else of the benchmarks."""

"""What the figures measure besides the reference: ``legacy``, the design note's legacy pipeline (whose
adapter is the kit's miniature ``tests/miniatures/legacy.py``)."""

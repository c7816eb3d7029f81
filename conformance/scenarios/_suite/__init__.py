"""The kit's own pytest suite: one module that binds every feature file (``test_features.py``) and the
``pytest.ini`` a run uses. :data:`SUITE_DIR` is where it lives, for everything that runs or recognises it."""

from pathlib import Path

__all__ = ["SUITE_DIR"]

SUITE_DIR = Path(__file__).resolve().parent

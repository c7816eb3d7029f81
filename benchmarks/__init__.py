"""Benchmarks of the reference implementation and the kit: measurements, not tests.

Run ``python -m benchmarks run`` from the repository root; see the README's "Benchmarks" section. This
folder is not shipped in the wheel. It imports the reference and the kit; nothing imports it.

A folder per kind, top to bottom (``lint-imports`` checks the order, see ``pyproject.toml``):

- ``_cli``: the command (``run``, ``render``); ``_targets``: every target, in one place.
- ``rendering``: ``results.json`` to ``RESULTS.md``.
- ``figures``: one module or folder per figure, measuring it.
- ``subjects``: what the figures measure besides the reference (the design note's legacy pipeline).
- ``instruments``: what every figure measures with (statistics, profiles, core pinning, the machine).
- ``children``: programs the figures start in another process (a peer's venv, a stdio child, a pytest
  plugin of the timed run); they import nothing of the benchmarks.
"""

__all__: list[str] = []

"""Benchmarks of the reference implementation and the kit: measurements, not tests.

Run ``python -m benchmarks run`` from the repository root; see the README's "Benchmarks" section. This
folder is not shipped in the wheel. It imports the reference, the kit and the legacy miniature.
"""

__all__: list[str] = []

"""``python -m benchmarks``: see :mod:`benchmarks._cli`."""

from ._cli import main

raise SystemExit(main())

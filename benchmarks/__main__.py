"""``python -m benchmarks``: see :mod:`benchmarks._cli`."""

from benchmarks._cli import main

raise SystemExit(main())

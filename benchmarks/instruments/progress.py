"""Status lines and progress bars on stderr, so stdout stays free for the final summary.

The bars are the evaluation package's one progress bar (tqdm's, :func:`evaluation.progress_bar`): drawn on a
terminal, off in a pipe or a ``nohup`` log, where the status lines still say which step is running.
"""

from __future__ import annotations

import sys
from typing import TextIO

from evaluation import progress_bar

__all__ = ["progress_bar", "say"]


def say(message: str, *, stream: TextIO | None = None) -> None:
    """One status line on stderr (stdout stays free for the final summary)."""
    print(message, file=stream or sys.stderr, flush=True)

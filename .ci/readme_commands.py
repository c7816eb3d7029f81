"""Print the README's quick-start commands, one per line, for `.ci/run` to execute as written.

CI runs exactly what a newcomer reads: the commands come from the README's "## Quick start" section
(its ```console blocks), so the README and CI cannot drift apart. Standard library only: this runs
before anything is installed.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path


def quick_start_commands(readme: str) -> list[str]:
    start = readme.index("## Quick start")
    end = readme.find("\n## ", start)
    section = readme[start : end if end != -1 else len(readme)]
    blocks = re.findall(r"^```console\n(.*?)^```$", section, re.MULTILINE | re.DOTALL)
    return [line.strip() for block in blocks for line in block.splitlines() if line.strip()]


if __name__ == "__main__":
    readme = Path(sys.argv[1] if len(sys.argv) > 1 else "README.md").read_text(encoding="utf-8")
    commands = quick_start_commands(readme)
    if len(commands) != 2:
        sys.exit(f"the README's quick start must be exactly two commands, found {len(commands)}: {commands}")
    print("\n".join(commands))

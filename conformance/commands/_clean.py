"""``rag-conformance clean``: list, and with ``--yes`` drop, what killed kit runs left on an engine.

Only names of the kit's own pattern (``rqs_<run id>_...``, :mod:`conformance.engines._sweep`) are ever
touched; everything else on the engine is not even listed. A run in progress on the same engine looks
like a leftover, so nothing is dropped without ``--yes``, and ``--prefix`` limits it to one run.
"""

from __future__ import annotations

import sys

from ..boundary._errors import ConformanceError
from ..boundary._redact import redact

__all__ = ["clean"]


def clean(milvus: str, *, yes: bool = False, prefix: str | None = None) -> int:
    """List the kit's leftovers on ``milvus`` and drop them when ``yes``; the exit code (0, or 2 when
    the engine cannot be reached or a drop failed)."""
    from ..engines import start_engine
    from ..engines._sweep import describe_leftovers, kit_leftovers, list_names

    try:
        engine = start_engine(milvus)
    except ConformanceError as exc:
        print(f"rag-conformance clean: {redact(str(exc))}", file=sys.stderr)
        return 2
    with engine:
        client = engine.client()
        runs = kit_leftovers(list_names(client), except_prefix=engine.prefix)
        if prefix is not None:
            runs = {p: names for p, names in runs.items() if p == prefix}
        if not runs:
            print(
                f"no collections of other kit runs on {engine.redacted_uri}"
                + (f" with {prefix}" * bool(prefix))
            )
            return 0
        print(f"{engine.redacted_uri} holds {describe_leftovers(runs)}:")
        for names in runs.values():
            for name in names:
                print(f"  {name}")
        if not yes:
            print(
                "nothing dropped: a run still in progress on this engine looks the same; when none is, "
                "run again with --yes (or --prefix rqs_<run id>_ --yes for one run)"
            )
            return 0
        failed = []
        for name in (n for names in runs.values() for n in names):
            try:
                client.drop_collection(name)
            except Exception as exc:
                failed.append(f"{name} ({redact(str(getattr(exc, 'message', None) or exc))})")
        dropped = sum(len(n) for n in runs.values()) - len(failed)
        print(f"dropped {dropped} collection{'s' * (dropped != 1)}")
        if failed:
            print(f"could not drop: {'; '.join(failed)}", file=sys.stderr)
            return 2
        return 0

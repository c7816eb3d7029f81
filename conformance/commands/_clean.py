"""``rag-conformance clean``: what killed kit runs left behind, in Docker or on an engine.

- Containers (without ``--milvus``): every container the kit starts carries its labels
  (:mod:`conformance.engines._container_sweep`). Those whose owner process is gone from this machine
  are removed; those of a run still going are listed and left alone; those started from another
  machine are removed only with ``--yes``. Containers without the kit's label are never touched, nor
  listed.
- Collections (with ``--milvus``): only names of the kit's own pattern (``rqs_<run id>_...``,
  :mod:`conformance.engines._sweep`) are ever touched; everything else on the engine is not even
  listed. A run in progress on the same engine looks like a leftover, so nothing is dropped without
  ``--yes``, and ``--prefix`` limits it to one run.
"""

from __future__ import annotations

import sys

from ..boundary._errors import ConformanceError
from ..boundary._redact import redact

__all__ = ["clean"]


def clean(milvus: str | None, *, yes: bool = False, prefix: str | None = None) -> int:
    """Without ``milvus``: remove the containers of kit runs that are gone. With it: list the kit's
    leftover collections on ``milvus`` and drop them when ``yes``. The exit code: 0, or 2 when the
    engine cannot be reached or a removal failed."""
    if milvus is None:
        return _clean_containers(yes=yes, prefix=prefix)
    return _clean_collections(milvus, yes=yes, prefix=prefix)


def _clean_containers(*, yes: bool, prefix: str | None) -> int:
    from ..engines._container import docker_unavailable_reason
    from ..engines._container_sweep import kit_containers, remove_containers

    reason = docker_unavailable_reason()
    if reason is not None:
        print(f"no kit containers checked: {reason} (for an engine's collections, pass --milvus)")
        return 0
    import docker

    client = docker.from_env()
    try:
        found = [c for c in kit_containers(client) if prefix is None or c.run == prefix]
        gone = [c for c in found if c.leftover or (yes and c.owner_alive is None)]
        for container in found:
            if container in gone:
                what = "removing"
            elif container.owner_alive:
                what = "in use by a run still going, left alone:"
            else:
                what = "started from another machine, left alone (--yes removes it):"
            print(
                f"{what} container {container.name} ({container.image}, run {container.run}, "
                f"owner {container.owner})"
            )
        failed = remove_containers(client, gone)
    finally:
        client.close()
    removed = len(gone) - len(failed)
    print(f"removed {removed} kit container{'s' * (removed != 1)} of runs that are gone")
    if failed:
        print(f"could not remove: {'; '.join(failed)}", file=sys.stderr)
        return 2
    return 0


def _clean_collections(milvus: str, *, yes: bool, prefix: str | None) -> int:
    from ..engines import start_engine
    from ..engines._sweep import describe_leftovers, kit_leftovers, list_names

    try:
        engine = start_engine(milvus)
    except ConformanceError as exc:
        print(f"rag-conformance clean: {redact(str(exc))}", file=sys.stderr)
        return 2
    with engine:
        if engine.disposable:  # a server the kit just started: it holds nothing of another run
            print(f"{milvus} is a new engine of this command's own: nothing of other runs on it")
            return 0
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

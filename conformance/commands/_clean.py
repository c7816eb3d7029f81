"""``rag-conformance clean``: what killed kit runs left behind, in Docker or on an engine.

- Containers (without ``--milvus``): every container the kit starts carries its labels
  (:mod:`conformance.engines._container_sweep`). Those whose owner process is gone from this machine
  are removed; those of a run still going are listed and left alone; those started from another
  machine are removed only with ``--yes``. Containers without the kit's label are never touched, nor
  listed.
- Collections (with ``--milvus``): only names of the kit's own pattern (``rqs_<run id>_...``,
  :mod:`conformance.engines._sweep`) are ever touched; everything else on the engine is not even
  listed. Nothing is dropped without ``--yes``, and ``--prefix`` limits it to one run. A run still
  going holds a lease (:mod:`conformance.engines._lease`: its pid alive on this host, or a heartbeat
  younger than a minute from another): its collections are listed as such and left alone, even with
  ``--yes``, unless ``--force`` (that run then ends NOT JUDGED, naming the collection it lost).
"""

from __future__ import annotations

import sys

from ..boundary._errors import ConformanceError
from ..boundary._redact import redact
from ..engines._lease import LeaseRecord, drop_lease, read_lease

__all__ = ["clean"]


def clean(milvus: str | None, *, yes: bool = False, prefix: str | None = None, force: bool = False) -> int:
    """Without ``milvus``: remove the containers of kit runs that are gone. With it: list the kit's
    leftover collections on ``milvus`` and drop them when ``yes``, but those of a run still alive
    only when ``force`` too. The exit code: 0, or 2 when the
    engine cannot be reached or a removal failed."""
    if milvus is None:
        return _clean_containers(yes=yes, prefix=prefix)
    return _clean_collections(milvus, yes=yes, prefix=prefix, force=force)


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


def _clean_collections(milvus: str, *, yes: bool, prefix: str | None, force: bool) -> int:
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
        live = _live_runs(runs)
        for run_prefix, lease in live.items():
            print(
                f"  {run_prefix}: a run still going ({lease.describe()})"
                + (", dropped anyway (--force)" if yes and force else ", left alone" if yes else "")
            )
        if not yes:
            print(
                "nothing dropped: when the runs above are gone, run again with --yes (or --prefix "
                "rqs_<run id>_ --yes for one run); a run still going is left alone unless --force"
            )
            return 0
        doomed = {p: names for p, names in runs.items() if force or p not in live}
        if live and not force:
            skipped = sum(len(runs[p]) for p in live)
            print(
                f"skipped {skipped} collection{'s' * (skipped != 1)} of {len(live)} run"
                f"{'s' * (len(live) != 1)} still going ({', '.join(live)}: its lease is alive); "
                "--yes --force drops them anyway, and that run will end NOT JUDGED"
            )
        failed = []
        for name in (n for names in doomed.values() for n in names):
            try:
                client.drop_collection(name)
            except Exception as exc:
                failed.append(f"{name} ({redact(str(getattr(exc, 'message', None) or exc))})")
        for run_prefix in doomed:
            if run_prefix not in live:
                drop_lease(run_prefix)
        dropped = sum(len(n) for n in doomed.values()) - len(failed)
        print(f"dropped {dropped} collection{'s' * (dropped != 1)}")
        if failed:
            print(f"could not drop: {'; '.join(failed)}", file=sys.stderr)
            return 2
        return 0


def _live_runs(runs: dict[str, list[str]]) -> dict[str, LeaseRecord]:
    """The runs among ``runs`` whose lease says they still live (:mod:`conformance.engines._lease`)."""
    leases = {p: read_lease(p) for p in runs}
    return {p: lease for p, lease in leases.items() if lease is not None and lease.alive()}

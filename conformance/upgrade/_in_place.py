"""``rag-conformance upgrade --in-place``: the next engine started on the data the old one wrote.

A team does not upgrade by ingesting everything again: it stops Milvus and starts the next version on
the same data (a Lite file, a server's data directory). So, on one data dir (a copy of the team's own,
``data_dir``, or a new one):

1. the old engine starts there on a loopback port, and the implementation (the reference, or the team's
   adapter) ingests the labelled set's corpus through ``prepare``; every labelled query is asked in
   each mode the engine has, after the kit's own client has flushed each collection and noted its
   rows and indexes; the engine stops cleanly, keeping its data;
2. the new engine starts on the same data and the same port (where the implementation's client finds
   it again, as a team's application would). If it cannot: CANNOT OPEN, with the engine's own words
   and what a team does instead;
3. the collections, row counts and indexes are looked for again, and every query is asked again of the
   same implementation instance: the same ids in the same order with the same scores
   (:data:`~._in_place_values.SAME_SCORE_WITHIN`), every difference listed per query.

Nothing is written to the team's data dir: it is copied first unless ``write_in_place`` says so.
"""

from __future__ import annotations

import contextlib
import logging
import secrets
import shutil
import sys
import tempfile
import threading
import time
from collections.abc import Sequence
from pathlib import Path
from typing import IO, Any
from urllib.parse import urlsplit

from evaluation import LabelledSet

from ..adapters._loading import load_adapter
from ..boundary._errors import ConformanceError
from ..boundary._protocol import LookupRequest
from ..boundary._signals import join_in_slices
from ..engines import Engine, EngineUnavailableError, engine_label, parse_engine_address, start_engine
from ..engines._facts import engine_facts
from ..engines._lines import LOCAL_ENGINES, shares_data
from ..engines._load import stretched
from ..engines._local import LITE_FILE
from ._in_place_values import (
    Answer,
    CollectionState,
    InPlaceResult,
    compare_answers,
    compare_inventories,
    engine_words,
)
from ._labelled import UpgradeInputError, embed
from ._settings import Lookup
from ._sides import MODES, _answers, _corpus

__all__ = ["IN_PLACE_FILE", "check_in_place"]

IN_PLACE_FILE = "in-place.json"
_CLOSE_SECONDS = 15.0  # the implementation's close, bounded where its engine is gone
_SERVE_POLL_SECONDS = 1.0
LOAD_SECONDS = 60.0  # a small collection loads in seconds; longer (stretched with the load) is a finding
_REINGEST = (
    "keep the old engine serving until the data is moved: start the new engine on an empty data dir "
    "and ingest your source data again (or export each collection with the old version's tools, e.g. "
    "`milvus-lite dump` of the old milvus-lite, and import it), then point your application at it"
)


def _lite_file_advice(old: str, new: str) -> str:
    return (
        f"{old} keeps a Lite database as one file, {new} as a directory at the same path, and cannot "
        f"read the old file: {_REINGEST}; or stay on {old}'s milvus-lite until then"
    )


def _nullable_advice(new: str, inventory: Sequence[CollectionState]) -> str:
    """Where the old collections have nullable fields and the new line has none: say so first."""
    spec = LOCAL_ENGINES.get(new)
    version = f"milvus_lite-{new[5:]}" if spec is not None and spec.kind != "server" else None
    if version is None or engine_facts(version).nullable_fields is not False:
        return ""
    holding = [f"{c.name} ({', '.join(c.nullable)})" for c in inventory if c.nullable]
    if not holding:
        return ""
    return (
        f"the old engine's collections have nullable fields, which {new} does not have: "
        f"{'; '.join(holding)}; recreate them without nullable fields (store absent values another "
        "way) or stay on the old engine. "
    )


def _check_addresses(old: str, new: str) -> None:
    specs = []
    for address in (old, new):
        backend = parse_engine_address(address)
        if backend.kind == "lite" and backend.target is None:
            specs.append(None)
        elif backend.kind == "local":
            specs.append(LOCAL_ENGINES[str(backend.target)])
        else:
            raise UpgradeInputError(
                f"--in-place starts both engines on one data dir on this machine: it takes lite and the "
                f"engine lines ({', '.join(LOCAL_ENGINES)}), not {engine_label(address)}; for a server "
                "you run yourself, upgrade a copy of it and compare with `upgrade --from uri:... "
                "--to uri:...`"
            )
    if not shares_data(specs[0], specs[1]):
        raise UpgradeInputError(
            f"{old} and {new} keep their data in different forms (a Lite file, a server data directory): "
            "no team upgrades one into the other in place; pick two Lite lines or two server lines"
        )


def _start(address: str, data: Path, port: int | None, run_id: str, timeout: float | None = None) -> Engine:
    # The kit's own Lite 3.x takes the Lite file's path as its data dir; the lines take the dir.
    where = data / LITE_FILE if parse_engine_address(address).kind == "lite" else data
    return start_engine(address, data_dir=where, port=port, run_id=run_id, startup_timeout=timeout)


def _start_old(address: str, data: Path, run_id: str) -> tuple[Engine, int]:
    """The old engine on a port of the start's choosing (another free one where a process takes the first
    before the engine binds it), and that port: the new engine takes it over."""
    engine = _start(address, data, None, run_id)
    port = urlsplit(engine.endpoint.uri).port
    assert port is not None, engine.endpoint.uri  # every start the kit makes is on a loopback port
    return engine, port


class _StoppedError(Exception):
    """The new engine opened the data but stopped answering at one step: what it was doing, and its error."""


def _inventory(engine: Engine, *, flush: bool) -> list[CollectionState]:
    """Each collection's rows and indexes, loaded first (as an application's first search would);
    :class:`_StoppedError` when the engine stops answering on the way."""
    client = engine.client()
    states = []
    for name in sorted(client.list_collections()):
        step = "flush" if flush else "load"
        problem: str | None = None
        late: tuple[float, str] | None = None
        try:
            if flush:
                client.flush(name)
            else:  # bounded: a load that never finishes is a finding, not a hang
                client.load_collection(name, timeout=stretched(LOAD_SECONDS))
                late = _until_it_serves(client, name, stretched(LOAD_SECONDS))
        except Exception as exc:
            _still_there(engine, f"{step} of {name}", exc)
            problem = f"{step} failed: {_said(exc)}"
        rows: int | None = None
        try:
            reply = client.query(name, filter="", output_fields=["count(*)"])
            rows = int(reply[0]["count(*)"])
        except Exception as exc:
            _still_there(engine, f"count(*) of {name}", exc)
            with contextlib.suppress(Exception):
                rows = int(client.get_collection_stats(name)["row_count"])
        nullable: tuple[str, ...] = ()
        with contextlib.suppress(Exception):
            fields = client.describe_collection(name)["fields"]
            nullable = tuple(f["name"] for f in fields if f.get("nullable"))
        indexes = []
        with contextlib.suppress(Exception):
            for index in client.list_indexes(name):
                info = client.describe_index(name, index)
                indexes.append(f"{info.get('field_name')}:{info.get('index_type')}:{info.get('metric_type')}")
        states.append(
            CollectionState(
                name=name,
                rows=rows,
                indexes=tuple(sorted(indexes)),
                nullable=nullable,
                problem=problem,
                serving_after=round(late[0], 1) if late else None,
                until_serving=late[1] if late else None,
            )
        )
    return states


def _still_there(engine: Engine, step: str, exc: BaseException) -> None:
    try:
        engine.check_reachable()
    except EngineUnavailableError:
        raise _StoppedError(
            f"it lists the collections, then its server stopped answering at the {step} ({_said(exc)})"
        ) from None


def _said(exc: BaseException) -> str:
    """An engine's error in one line: its type, and the first line of its message (pymilvus's own)."""
    text = str(getattr(exc, "message", None) or exc).strip().splitlines()
    return f"{type(exc).__name__}: {text[0] if text else 'no words'}"


def _ask_all(
    adapter: Any, requests: Sequence[tuple[str, LookupRequest]], modes: Sequence[str]
) -> dict[tuple[str, str], Answer]:
    answers = {}
    for mode in modes:
        for query_id, request in requests:
            ask = request.model_copy(update={"mode": mode})
            answer = Answer(error="not asked")
            for _attempt in range(2):  # the client may need one call to find the restarted engine
                try:
                    reply = adapter.lookup(ask)
                except Exception as exc:
                    text = str(exc).strip()
                    answer = Answer(error=f"{type(exc).__name__}: {text.splitlines()[0] if text else ''}")
                    continue
                answer = Answer(
                    keys=tuple(b.evidence_key for b in reply.blocks),
                    scores=tuple(float(b.quality_score) for b in reply.blocks),
                    top=None if reply.top_quality_score is None else float(reply.top_quality_score),
                )
                break
            answers[(query_id, mode)] = answer
    return answers


def _modes(version: str, info: Any) -> tuple[str, ...]:
    facts = engine_facts(version)
    lacks_hybrid = facts.bm25 is False or facts.hybrid_search is False
    return tuple(m for m in MODES if info.supports("lookup", m) and not (m == "hybrid" and lacks_hybrid))


def check_in_place(
    old: str,
    new: str,
    labelled: LabelledSet,
    lookup: Lookup,
    *,
    adapter: str = "reference",
    data_dir: str | Path | None = None,
    write_in_place: bool = False,
    open_timeout: float | None = None,
    output: IO[str] | None = None,
) -> InPlaceResult:
    """Upgrade ``old`` to ``new`` in place on one data dir and say what the new engine finds there.

    ``open_timeout`` (seconds) bounds the new engine's start on the old data (default: the engine's own
    startup budget, stretched with the machine's load): not answering by then is CANNOT OPEN."""
    if open_timeout is not None and open_timeout <= 0:
        raise UpgradeInputError(f"--open-timeout is {open_timeout}; give a positive number of seconds")
    out = output or sys.stderr
    _check_addresses(old, new)
    source = Path(data_dir).expanduser().resolve() if data_dir is not None else None
    if source is not None and not source.is_dir():
        raise UpgradeInputError(f"--data-dir {source} is not a directory: give the old engine's data dir")
    scratch = Path(tempfile.mkdtemp(prefix="rqs-in-place-"))
    quiet = logging.getLogger("pymilvus")  # its tracebacks of the calls expected to fail are not ours
    level, quiet.level = quiet.level, logging.CRITICAL
    try:
        if source is None:
            data, shown = scratch / "data", "a new data dir (the labelled set's corpus only)"
        elif write_in_place:
            data, shown = source, f"{source} itself (--write-in-place)"
        else:
            data, shown = scratch / "data", f"a copy of {source}"
            shutil.copytree(source, data, symlinks=True)
        data.mkdir(parents=True, exist_ok=True)
        print(f"upgrade in place: embedding {len(labelled.corpus)} chunks", file=out, flush=True)
        corpus = _corpus(labelled, embed([c.text for c in labelled.corpus]))
        config = lookup.config()
        requests = [
            (q.id, LookupRequest(query_text=q.query, query_vector=v, category=q.category,
                                 retrieve_k=lookup.retrieve_k, rrf_k=lookup.rrf_k, config=config))
            for q, v in zip(labelled.queries, embed([q.query for q in labelled.queries]), strict=True)
        ]  # fmt: skip
        where = f"{shown}, {data}"
        return _upgrade(old, new, data, where, corpus, requests, adapter, out, open_timeout)
    finally:
        quiet.setLevel(level)
        shutil.rmtree(scratch, ignore_errors=True)


def _until_it_serves(client: Any, name: str, seconds: float) -> tuple[float, str] | None:
    """Wait, at most ``seconds``, for a loaded collection to answer a ``count(*)``; past that, its last
    error. A restarted engine can call a collection loaded before it serves it: Milvus 2.3.5 on 2.2.16's
    data answered "collection not loaded" to every search until the old server's sessions expired.
    None when it served at once; else (seconds it took, what it answered until then): a finding of its
    own for a team that upgrades in place, whose application meets the same."""
    started = time.monotonic()
    first: str | None = None
    while True:
        try:
            client.query(name, filter="", output_fields=["count(*)"])
            return None if first is None else (time.monotonic() - started, first)
        except Exception as exc:
            if time.monotonic() - started >= seconds:
                raise
            if first is None:
                first = _said(exc)
            time.sleep(_SERVE_POLL_SECONDS)


def _upgrade(
    old: str,
    new: str,
    data: Path,
    shown: str,
    corpus: Any,
    requests: Sequence[tuple[str, LookupRequest]],
    adapter_spec: str,
    out: IO[str],
    open_timeout: float | None,
) -> InPlaceResult:
    run_id = secrets.token_hex(4)
    adapter, info = load_adapter(adapter_spec)
    print(f"upgrade in place: starting {engine_label(old)} on {data}", file=out, flush=True)
    try:
        engine, port = _start_old(old, data, run_id)
    except BaseException:
        _close_within(adapter, _CLOSE_SECONDS)
        raise
    second: Engine | None = None
    try:
        old_version = engine.server_version()
        facts = engine_facts(old_version)
        try:
            adapter.prepare(engine.endpoint.model_copy(update={"engine": facts}), corpus)
        except Exception as exc:
            raise ConformanceError(
                f"{engine_label(old)}: the implementation could not ingest the labelled set's corpus "
                f"({type(exc).__name__}: {str(exc).strip().splitlines()[0] if str(exc).strip() else ''}); "
                "nothing to upgrade in place: fix that on the old engine first (rag-conformance run "
                f"--milvus {old} says more)"
            ) from exc
        modes = _modes(old_version, info)
        inventory = _inventory(engine, flush=True)  # first: the answers are those of the data as stopped
        before = _ask_all(adapter, requests, modes)
        engine.shut_down()
        print(f"upgrade in place: {old} stopped; starting {engine_label(new)} on the same data", file=out)
        base = {"old": old, "new": new, "old_version": old_version, "data": shown, "before": inventory}
        try:
            second = _start(new, data, port, run_id, open_timeout)
            after_inventory = _inventory(second, flush=False)
        except (EngineUnavailableError, _StoppedError) as exc:
            python_lite = new not in LOCAL_ENGINES or LOCAL_ENGINES[new].kind == "lite-python"
            lite_file = (data / LITE_FILE).is_file() and python_lite  # 2.x's file, where 3.x wants a dir
            advice = _lite_file_advice(old, new) if lite_file else _REINGEST
            advice = _nullable_advice(new, inventory) + advice
            words = str(exc) if isinstance(exc, _StoppedError) else engine_words(str(exc))
            return InPlaceResult(**base, verdict="CANNOT OPEN", engine_words=words, advice=advice)
        new_version = second.server_version()
        modes = tuple(m for m in modes if m in _modes(new_version, info))
        after = _ask_all(adapter, requests, modes)
        before = {key: answer for key, answer in before.items() if key[1] in modes}
        changes = compare_answers(before, after)
        missing = compare_inventories(inventory, after_inventory)
        return InPlaceResult(
            **base,
            new_version=new_version,
            verdict="CHANGED" if changes or missing else "UNCHANGED",
            after=after_inventory,
            missing=missing,
            modes=modes,
            queries=len(requests),
            changes=changes,
        )
    finally:
        if second is not None and _answers(second):
            _close_within(adapter, _CLOSE_SECONDS)  # drops what prepare made, on the new engine's data
            second.close()
        elif second is not None:
            second.shut_down()  # nothing answers to drop from
            _close_within(adapter, _CLOSE_SECONDS)
        elif not engine.closed:  # failed before the old engine stopped: drop what this run made there
            _close_within(adapter, _CLOSE_SECONDS)
            with contextlib.suppress(ConformanceError):
                engine.close()
        else:  # the new engine never opened: the implementation's client has nothing to reach
            _close_within(adapter, _CLOSE_SECONDS)


def _close_within(adapter: Any, seconds: float) -> None:
    """``adapter.close()``, given ``seconds``: a client whose engine is gone may retry for long; the
    implementation's own process (a stdio program) is ended by its adapter either way."""
    worker = threading.Thread(target=_close_quietly, args=(adapter,), daemon=True)
    worker.start()
    join_in_slices(worker, seconds)


def _close_quietly(adapter: Any) -> None:
    with contextlib.suppress(Exception):
        adapter.close()

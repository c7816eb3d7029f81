"""A kill -9 of the ingesting process at three points of a replace: every lookup in between answers one
whole version of each document (the old one until its commit), and running the ingest again repairs it.

The ingest runs in a child process that SIGKILLs itself right after the chosen step
(``reference.store._writes._after_step``), against a Milvus Lite server this module shares.
"""

from __future__ import annotations

import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from conformance.engines._load import stretched
from reference.store._store import MilvusKnowledgeStore

from ..lite_server import LiteServer
from .knowledge_base import DIM, DOCS, stored, texts, version, whole_versions

ROOT = Path(__file__).resolve().parents[4]
CHILD = """
import os, signal, sys
from reference.store import _writes
from reference.store._store import MilvusKnowledgeStore
from tests.integration.reference.store.knowledge_base import DIM, DOCS, version

uri, collection, point = sys.argv[1:4]

def stop(step):
    if step == point:
        os.kill(os.getpid(), signal.SIGKILL)

_writes._after_step = stop
_writes._COMMIT_GROUP = 1  # one document per commit: a kill can fall between two of them
with MilvusKnowledgeStore.connect(uri, collection=collection, dim=DIM) as store:
    store.ingest([c for doc in DOCS for c in version(doc, 2, 2)], batch_size=2)
print("the ingest ended without being killed")
"""
SIZES = {(doc, 1): 5 for doc in DOCS} | {(doc, 2): 2 for doc in DOCS}
NEW = [c for doc in DOCS for c in version(doc, 2, 2)]


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LiteServer]:
    lite = LiteServer(tmp_path_factory.mktemp("crash"))
    try:
        lite.start()
        yield lite
    finally:
        lite.close()


@pytest.mark.parametrize(
    ("point", "answered_after"),
    [
        # Some new chunks written, none committed: the old version answers, whole.
        ("written 2", {"alpha": 1, "beta": 1, "gamma": 1}),
        # Every new chunk written, none committed: still the old version.
        ("written 6", {"alpha": 1, "beta": 1, "gamma": 1}),
        # One document committed: it answers from the new version, the others from the old.
        ("committed 1", {"alpha": 2, "beta": 1, "gamma": 1}),
    ],
)
def test_a_killed_replace_answers_one_version_and_a_rerun_repairs_it(
    server: LiteServer, point: str, answered_after: dict[str, int]
) -> None:
    collection = f"crash_{point.replace(' ', '_')}"
    with MilvusKnowledgeStore.connect(server.uri, collection=collection, dim=DIM) as store:
        store.drop()
        try:
            store.ingest([c for doc in DOCS for c in version(doc, 1, 5)])
            child = subprocess.run(
                [sys.executable, "-c", CHILD, server.uri, collection, point],
                cwd=ROOT,
                capture_output=True,
                text=True,
                timeout=stretched(120),
                check=False,
            )
            assert child.returncode == -signal.SIGKILL, (child.returncode, child.stdout, child.stderr[-2000:])

            assert whole_versions(store, SIZES) == answered_after

            assert store.ingest(NEW) == len(NEW)  # the rerun
            assert stored(store) == texts(NEW)
            assert whole_versions(store, SIZES) == dict.fromkeys(DOCS, 2)
        finally:
            store.drop()

"""The Milvus image the container tests run, when it is there: the tests never build it.

``rag-conformance build-image`` builds it (debootstrap, as root; about 560 MB), and CI (``.ci/run``)
runs that explicitly, in the background while the tests start: a build in progress holds the build's
lock, and :func:`built_image` waits for that lock before it looks. Where no Docker engine answers, or
the image is not there, the tests that need it are skipped with the reason and the command that builds
it.
"""

from __future__ import annotations

import fcntl

import pytest

from conformance.engines._container import BUILT_IMAGE, docker_unavailable_reason
from conformance.engines._local import cache_root

__all__ = ["BUILD_COMMAND", "built_image", "docker_or_skip"]

BUILD_COMMAND = "rag-conformance build-image"


def docker_or_skip() -> None:
    """Skip, saying why, where no Docker engine answers."""
    reason = docker_unavailable_reason()
    if reason is not None:
        pytest.skip(f"the container backend needs Docker: {reason}")


def _wait_for_a_build_in_progress() -> None:
    """Block while ``rag-conformance build-image`` holds its lock (CI starts it beside the tests)."""
    lock_file = cache_root() / "images" / ".lock"
    if not lock_file.is_file():
        return  # no build ever ran here; nothing to wait for, and nothing is created
    with lock_file.open("r") as lock:
        fcntl.flock(lock, fcntl.LOCK_SH)


def built_image() -> str:
    """The name of the Milvus 2.3.5 image when Docker has it; else skip, naming the command that builds it."""
    docker_or_skip()
    _wait_for_a_build_in_progress()
    import docker
    import docker.errors

    client = docker.from_env()
    try:
        client.images.get(BUILT_IMAGE)
    except docker.errors.ImageNotFound:
        pytest.skip(
            f"the Milvus image {BUILT_IMAGE} is not built on this machine; the tests never build it. "
            f"Build it with `{BUILD_COMMAND}` (debootstrap, as root; about 560 MB), then run them again"
        )
    finally:
        client.close()
    return BUILT_IMAGE

"""The Milvus image the container tests run: built here by ``rag-conformance build-image`` (cached).

Where no Docker engine answers, or the image cannot be built (no root for debootstrap, no network for
the wheel), the tests that need it are skipped with the reason. In CI (``.ci/run``) the image is
being built in the background before the tests start; the build's lock makes this wait for that build
and then find the image up to date.
"""

from __future__ import annotations

import functools
import io

import pytest

from conformance.engines._container import docker_unavailable_reason

__all__ = ["built_image", "docker_or_skip"]


def docker_or_skip() -> None:
    """Skip, saying why, where no Docker engine answers."""
    reason = docker_unavailable_reason()
    if reason is not None:
        pytest.skip(f"the container backend needs Docker: {reason}")


@functools.cache
def _build() -> tuple[str | None, str]:
    from conformance.engines._image import ImageBuildError, build_image

    log = io.StringIO()
    try:
        return build_image(output=log).tag, log.getvalue()
    except ImageBuildError as exc:
        return None, str(exc)


def built_image() -> str:
    """The name of the built Milvus 2.3.5 image, or skip saying why there is none."""
    docker_or_skip()
    tag, detail = _build()
    if tag is None:
        pytest.skip(f"the Milvus image could not be built here: {detail}")
    return tag

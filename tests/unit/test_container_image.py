"""The container tests' image helper never builds: without the image it skips, naming the command."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import docker
import docker.errors
import pytest

import conformance.engines._image
import tests.container_image as container_image


class _Images:
    def __init__(self, present: set[str]) -> None:
        self.present = present

    def get(self, name: str) -> object:
        if name not in self.present:
            raise docker.errors.ImageNotFound(f"no such image: {name}")
        return object()


class _Client:
    def __init__(self, present: set[str]) -> None:
        self.images = _Images(present)
        self.closed = False

    def close(self) -> None:
        self.closed = True


@pytest.fixture
def docker_with(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Callable[..., _Client]:
    """A Docker engine that answers and holds the images given; building anything fails the test."""

    def use(*present: str) -> _Client:
        client = _Client(set(present))
        monkeypatch.setattr(container_image, "docker_unavailable_reason", lambda: None)
        monkeypatch.setattr(docker, "from_env", lambda **_: client)
        monkeypatch.setenv("RQS_ENGINE_CACHE", str(tmp_path))

        def no_build(*args: object, **kwargs: object) -> None:
            raise AssertionError("a test built the image")

        monkeypatch.setattr(conformance.engines._image, "build_image", no_build)
        return client

    return use


def test_without_the_image_the_test_skips_naming_the_command_that_builds_it(
    docker_with: Callable[..., _Client],
) -> None:
    client = docker_with()
    with pytest.raises(pytest.skip.Exception) as skipped:
        container_image.built_image()
    message = str(skipped.value)
    assert container_image.BUILT_IMAGE in message
    assert "`rag-conformance build-image`" in message
    assert client.closed


def test_with_the_image_its_name_is_given(docker_with: Callable[..., _Client]) -> None:
    docker_with(container_image.BUILT_IMAGE)
    assert container_image.built_image() == container_image.BUILT_IMAGE


def test_without_docker_the_test_skips_saying_why(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(container_image, "docker_unavailable_reason", lambda: "no Docker engine answers")
    with pytest.raises(pytest.skip.Exception, match="needs Docker: no Docker engine answers"):
        container_image.built_image()

"""``rag-conformance clean --engine-cache``: lists what the kit downloaded and built, removes it only with
--yes, and never touches what it did not make (other folders in the cache, images without its label)."""

from __future__ import annotations

from pathlib import Path

import docker
import docker.errors
import pytest

import conformance.engines._container as container
from conformance.commands._clean_cache import clean_engine_cache
from conformance.commands._cli import main
from conformance.engines._image import BASE_IMAGE, IMAGES, LABEL_INPUTS

SERVER_IMAGE = IMAGES["milvus-2.3.5"].tag


@pytest.fixture
def cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """An engine cache holding one engine venv and the image wheels (the kit's), and a folder of the
    user's; no Docker engine answers."""
    root = tmp_path / "engines"
    (root / "lite-2.5.1" / "venv" / "bin").mkdir(parents=True)
    (root / "lite-2.5.1" / "venv" / "bin" / "python").write_bytes(b"x" * 2048)
    (root / "lite-2.5.1" / "installed.txt").write_text("milvus-lite==2.5.1\n")
    (root / "images" / "wheels").mkdir(parents=True)
    (root / "images" / "wheels" / "milvus-2.3.5-py3-none-any.whl").write_bytes(b"w" * 100)
    (root / "mine").mkdir()  # no installed.txt: not made by the kit
    (root / "notes.txt").write_text("the user's")
    monkeypatch.setenv("RQS_ENGINE_CACHE", str(root))
    monkeypatch.setattr(container, "docker_unavailable_reason", lambda: "no Docker engine answers")
    return root


def test_without_yes_it_lists_what_it_would_remove_and_removes_nothing(
    cache: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert clean_engine_cache(yes=False) == 0
    out = capsys.readouterr().out
    assert f"would remove {cache / 'lite-2.5.1'} (" in out
    assert f"would remove {cache / 'images'} (" in out
    assert f"not the kit's, left alone: {cache / 'mine'}" in out
    assert "no Docker images checked: no Docker engine answers" in out
    assert "nothing removed: run again with --yes" in out
    assert sorted(p.name for p in cache.iterdir()) == ["images", "lite-2.5.1", "mine", "notes.txt"]


def test_with_yes_it_removes_the_kits_folders_only(cache: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert clean_engine_cache(yes=True) == 0
    out = capsys.readouterr().out
    assert f"removing {cache / 'lite-2.5.1'} (" in out
    assert "removed 2 items" in out
    assert sorted(p.name for p in cache.iterdir()) == ["mine", "notes.txt"]


def test_an_empty_or_missing_cache_says_so(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("RQS_ENGINE_CACHE", str(tmp_path / "never-made"))
    monkeypatch.setattr(container, "docker_unavailable_reason", lambda: "no Docker engine answers")
    assert clean_engine_cache(yes=True) == 0
    assert "holds nothing of the kit's" in capsys.readouterr().out
    assert not (tmp_path / "never-made").exists()


class _Image:
    def __init__(self, labels: dict[str, str]) -> None:
        self.labels = labels
        self.attrs = {"Size": 563 * 1024 * 1024}


class _Docker:
    """A Docker engine holding the kit's server image, a same-named base image someone else made
    (no kit label), and recording what is removed."""

    def __init__(self) -> None:
        self.held = {SERVER_IMAGE: _Image({LABEL_INPUTS: "abc"}), BASE_IMAGE: _Image({})}
        self.removed: list[str] = []
        self.images = self

    def get(self, tag: str) -> _Image:
        if tag not in self.held:
            raise docker.errors.ImageNotFound(tag)
        return self.held[tag]

    def remove(self, tag: str) -> None:
        self.removed.append(tag)

    def close(self) -> None:
        pass


def test_it_removes_only_the_images_the_kit_built(
    cache: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    engine = _Docker()
    monkeypatch.setattr(container, "docker_unavailable_reason", lambda: None)
    monkeypatch.setattr(docker, "from_env", lambda **_: engine)
    assert clean_engine_cache(yes=False) == 0
    assert f"would remove Docker image {SERVER_IMAGE} (563.0 MB)" in capsys.readouterr().out
    assert engine.removed == []
    assert clean_engine_cache(yes=True) == 0
    assert engine.removed == [SERVER_IMAGE]  # the unlabelled base image is not the kit's


def test_the_option_works_alone(cache: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["clean", "--engine-cache", "--milvus", "lite"]) == 2
    assert "--engine-cache works alone" in capsys.readouterr().err
    assert main(["clean", "--engine-cache"]) == 0
    assert (cache / "lite-2.5.1").is_dir()

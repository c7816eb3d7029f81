"""``rag-conformance build-image``: a real Milvus server image built here, from the project's own files.

No registry is needed. The image is layered, each layer cached and rebuilt only when its inputs change:

1. a Debian root file system (``rag-conformance/debian:bookworm``): ``debootstrap --variant=minbase``
   from the Debian mirror the machine's apt sources name (``$RQS_DEBIAN_MIRROR`` overrides it), with
   python3 and its venv module, imported with ``docker import``; or any image given as ``--base`` that
   has python3 with venv;
2. the Milvus server: the PyPI package ``milvus`` 2.3.5 (its wheel downloaded once into the engine
   cache, ``$RQS_ENGINE_CACHE/images``), installed offline into a venv in the image, with the entry point
   of ``images/milvus-2.3.5/`` that honours testcontainers' ``MilvusContainer`` contract.

The inputs of each layer (its Dockerfile, entry point, wheel and base image id; the suite and packages of
the root file system) are hashed into a label: an image whose label matches is reused as it is, so a
second build costs a second. Builds are serialised by a lock file: two CI jobs on one machine build once.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

from ..boundary._errors import EngineError
from ._container import BUILT_IMAGE, docker_unavailable_reason
from ._local import cache_root

__all__ = ["BASE_IMAGE", "IMAGES", "BuiltImage", "ImageBuildError", "build_image"]

BASE_IMAGE = "rag-conformance/debian:bookworm"
LABEL_INPUTS = "org.rag-conformance.inputs"
MIRROR_ENV = "RQS_DEBIAN_MIRROR"
DEFAULT_MIRROR = "http://deb.debian.org/debian"
_SUITE = "bookworm"
_PACKAGES = ("python3", "python3-venv", "ca-certificates")
_HERE = Path(__file__).with_name("images")
# A Debian mirror named in an apt source: deb822 (`URIs: http://...debian`) or one line (`deb http://...debian`).
_MIRROR_LINE = re.compile(r"^(?:URIs:|deb)\s+(?:\[[^]]*\]\s+)?(\S+/debian)/?(?:\s|$)", re.M)


class ImageBuildError(EngineError):
    """The image could not be built; the message says which step failed and what to do."""


@dataclass(frozen=True)
class ImageSpec:
    """An image the kit can build: its tag, build context (Dockerfile and entry point) and wheel."""

    engine: str
    tag: str
    context: Path
    requirement: str  # the pip requirement whose wheel goes into the image
    about: str


IMAGES: dict[str, ImageSpec] = {
    "milvus-2.3.5": ImageSpec(
        "milvus-2.3.5",
        BUILT_IMAGE,
        _HERE / "milvus-2.3.5",
        "milvus==2.3.5",
        "Milvus 2.3.5 standalone, the Go server of the PyPI package milvus (embedded etcd, local storage)",
    ),
}


@dataclass(frozen=True)
class BuiltImage:
    """What :func:`build_image` made or found: the tag, the image id, whether it was built now."""

    tag: str
    id: str
    built: bool
    seconds: float


def _say(output: IO[str], text: str) -> None:
    print(f"build-image: {text}", file=output, flush=True)


def _digest(*parts: bytes | str) -> str:
    digest = hashlib.sha256()
    for part in parts:
        digest.update(part.encode() if isinstance(part, str) else part)
        digest.update(b"\0")
    return digest.hexdigest()[:32]


def _existing(client: Any, tag: str) -> Any | None:
    import docker.errors

    try:
        return client.images.get(tag)
    except docker.errors.ImageNotFound:
        return None


@contextlib.contextmanager
def _locked(directory: Path) -> Iterator[None]:
    directory.mkdir(parents=True, exist_ok=True)
    with (directory / ".lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # two builds at once: one builds, the other then finds it
        yield


def debian_mirror() -> str:
    """``$RQS_DEBIAN_MIRROR``, else the Debian mirror the machine's apt sources name, else deb.debian.org."""
    if os.environ.get(MIRROR_ENV):
        return os.environ[MIRROR_ENV]
    sources = [Path("/etc/apt/sources.list"), *sorted(Path("/etc/apt/sources.list.d").glob("*"))]
    for path in sources:
        with contextlib.suppress(OSError):
            text = path.read_text(errors="replace")
            for match in _MIRROR_LINE.finditer(text):
                return match.group(1)
    return DEFAULT_MIRROR


def _base_image(client: Any, output: IO[str]) -> Any:
    """The cached Debian root file system image, made with debootstrap when missing or stale."""
    inputs = _digest(_SUITE, *_PACKAGES, "minbase")
    found = _existing(client, BASE_IMAGE)
    if found is not None and (found.labels or {}).get(LABEL_INPUTS) == inputs:
        return found
    if shutil.which("debootstrap") is None:
        raise ImageBuildError(
            f"no {BASE_IMAGE} image yet, and making one needs debootstrap: install it (apt-get install "
            "debootstrap), or pass --base with an image that has python3 and python3-venv"
        )
    if os.geteuid() != 0:
        raise ImageBuildError(
            f"no {BASE_IMAGE} image yet, and debootstrap needs root: run build-image as root once (the "
            "image is then cached), or pass --base with an image that has python3 and python3-venv"
        )
    mirror = debian_mirror()
    started = time.monotonic()
    _say(output, f"making a Debian {_SUITE} root file system from {mirror} (debootstrap, about 2 minutes)")
    with tempfile.TemporaryDirectory(prefix="rqs-rootfs-") as tmp:
        root = Path(tmp) / "root"
        command = ["debootstrap", "--variant=minbase", f"--include={','.join(_PACKAGES)}", _SUITE, str(root)]
        log = Path(tmp) / "debootstrap.log"
        with log.open("wb") as sink:
            code = subprocess.call([*command, mirror], stdout=sink, stderr=subprocess.STDOUT)
        if code != 0:
            tail = "\n".join(log.read_text(errors="replace").splitlines()[-10:])
            raise ImageBuildError(
                f"debootstrap from {mirror} exited with {code}; set {MIRROR_ENV} to a Debian mirror this "
                f"machine reaches, or pass --base IMAGE. Its last lines:\n{tail}"
            )
        for cache in ("var/cache/apt/archives", "var/lib/apt/lists"):  # downloads, not the system
            for item in (root / cache).glob("*"):
                if item.is_file():
                    item.unlink()
        archive = Path(tmp) / "root.tar"
        subprocess.run(["tar", "-C", str(root), "--numeric-owner", "-cf", str(archive), "."], check=True)
        repository, _, tag = BASE_IMAGE.rpartition(":")
        client.api.import_image_from_file(
            str(archive), repository=repository, tag=tag, changes=[f"LABEL {LABEL_INPUTS}={inputs}"]
        )
    _say(output, f"{BASE_IMAGE} made in {time.monotonic() - started:.0f} s")
    return client.images.get(BASE_IMAGE)


def _wheel(spec: ImageSpec, output: IO[str]) -> Path:
    """The server's wheel, downloaded once into the engine cache."""
    name, _, version = spec.requirement.partition("==")
    directory = cache_root() / "images" / "wheels"
    directory.mkdir(parents=True, exist_ok=True)
    pattern = f"{name.replace('-', '_')}-{version}-*.whl"
    found = sorted(directory.glob(pattern))
    if not found:
        _say(output, f"downloading {spec.requirement} into {directory}")
        command = [sys.executable, "-m", "pip", "download", "--no-deps", "--only-binary=:all:"]
        code = subprocess.call(
            [*command, "-d", str(directory), spec.requirement], stdout=output, stderr=output
        )
        found = sorted(directory.glob(pattern))
        if code != 0 or not found:
            raise ImageBuildError(
                f"`pip download {spec.requirement}` exited with {code}; check the network and PyPI (or put "
                f"the wheel into {directory} by hand), then run again"
            )
    return found[-1]


def _file_digest(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def build_image(
    engine: str = "milvus-2.3.5",
    *,
    base: str | None = None,
    tag: str | None = None,
    output: IO[str] | None = None,
) -> BuiltImage:
    """Build (or find, up to date) the image of ``engine``; :class:`ImageBuildError` saying what to do.

    ``base`` is an image with python3 and python3-venv to build on (default: the Debian root file
    system made here); ``tag`` names the result (default ``rag-conformance/milvus:2.3.5``).
    """
    out = output or sys.stderr
    spec = IMAGES.get(engine)
    if spec is None:
        raise ImageBuildError(f"no image recipe for {engine!r}; the kit builds: {', '.join(IMAGES)}")
    reason = docker_unavailable_reason()
    if reason is not None:
        raise ImageBuildError(f"cannot build {spec.tag}: {reason}; start Docker (or set DOCKER_HOST)")
    import docker
    import docker.errors

    started = time.monotonic()
    target = tag or spec.tag
    client = docker.from_env(timeout=600)
    try:
        with _locked(cache_root() / "images"):
            base_image = client.images.get(base) if base else _base_image(client, out)
            wheel = _wheel(spec, out)
            files = sorted(p for p in spec.context.iterdir() if p.is_file())
            inputs = _digest(
                base_image.id, _file_digest(wheel), *(f"{p.name}:{_file_digest(p)}" for p in files)
            )
            found = _existing(client, target)
            if found is not None and (found.labels or {}).get(LABEL_INPUTS) == inputs:
                _say(out, f"{target} is up to date ({found.short_id})")
                return BuiltImage(target, found.id, False, time.monotonic() - started)
            _say(out, f"building {target}: {spec.about}")
            with tempfile.TemporaryDirectory(prefix="rqs-image-") as context:
                for path in files:
                    shutil.copy2(path, context)
                shutil.copy2(wheel, context)
                try:
                    image, _ = client.images.build(
                        path=context,
                        tag=target,
                        buildargs={"BASE": base or BASE_IMAGE, "WHEEL": wheel.name},
                        labels={LABEL_INPUTS: inputs},
                        rm=True,
                        forcerm=True,
                    )
                except docker.errors.BuildError as exc:
                    lines = [str(entry.get("stream", "")).rstrip() for entry in exc.build_log]
                    tail = "\n".join(line for line in lines if line)[-2000:]
                    raise ImageBuildError(f"docker build of {target} failed ({exc.msg}):\n{tail}") from None
    except docker.errors.DockerException as exc:
        raise ImageBuildError(f"building {target}: Docker answered {type(exc).__name__}: {exc}") from None
    finally:
        client.close()
    seconds = time.monotonic() - started
    _say(out, f"{target} built in {seconds:.0f} s ({image.short_id})")
    return BuiltImage(target, image.id, True, seconds)

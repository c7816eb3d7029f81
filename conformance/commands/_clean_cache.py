"""``rag-conformance clean --engine-cache``: the engines and images the kit downloaded or built, removed
on request.

What the kit made, and only that, is listed (with its size) before anything goes:

- in the engine cache (``$RQS_ENGINE_CACHE``, default ``~/.cache/rag-conformance/engines``): each engine
  venv ``ensure_venv`` made (a folder holding ``venv/`` and the ``installed.txt`` it writes), and
  ``images/`` (the server wheels ``build-image`` downloads, and its lock);
- in Docker: the images ``build-image`` makes (``rag-conformance/milvus:2.3.5`` and the Debian root file
  system ``rag-conformance/debian:bookworm``), each only when it carries the label the kit stamps on
  what it builds.

Anything else in the cache folder is listed as not the kit's and left alone; the folder itself stays.
Nothing is removed without ``--yes``.
"""

from __future__ import annotations

import shutil
import sys
from dataclasses import dataclass
from pathlib import Path

__all__ = ["clean_engine_cache"]


@dataclass(frozen=True)
class _Found:
    kit: list[Path]
    other: list[Path]


def _size(path: Path) -> int:
    if path.is_symlink() or path.is_file():
        return path.lstat().st_size
    return sum(p.lstat().st_size for p in path.rglob("*") if not p.is_dir() or p.is_symlink())


def _human(size: int) -> str:
    value = float(size)
    for unit in ("B", "KB", "MB", "GB"):
        if value < 1024 or unit == "GB":
            return f"{value:.0f} {unit}" if unit in ("B", "KB") else f"{value:.1f} {unit}"
        value /= 1024
    raise AssertionError("unreachable")


def _cache_entries(root: Path) -> _Found:
    """The kit's folders in the engine cache, and what else is there."""
    kit, other = [], []
    for entry in sorted(root.iterdir()) if root.is_dir() else []:
        made_by_ensure_venv = (entry / "installed.txt").is_file() and (entry / "venv").is_dir()
        made_by_build_image = entry.name == "images" and entry.is_dir() and not entry.is_symlink()
        if entry.is_dir() and not entry.is_symlink() and (made_by_ensure_venv or made_by_build_image):
            kit.append(entry)
        else:
            other.append(entry)
    return _Found(kit, other)


def _kit_images() -> tuple[list[tuple[str, int]], str | None]:
    """(tag, size) of the images the kit built that Docker holds, and why none were looked for."""
    from ..engines._container import docker_unavailable_reason
    from ..engines._image import BASE_IMAGE, IMAGES, LABEL_INPUTS

    reason = docker_unavailable_reason()
    if reason is not None:
        return [], reason
    import docker
    import docker.errors

    client = docker.from_env()
    found = []
    try:
        for tag in [*(spec.tag for spec in IMAGES.values()), BASE_IMAGE]:
            try:
                image = client.images.get(tag)
            except docker.errors.ImageNotFound:
                continue
            if LABEL_INPUTS in (image.labels or {}):  # stamped by build-image: the kit's own
                found.append((tag, int(image.attrs.get("Size", 0))))
    finally:
        client.close()
    return found, None


def _remove_images(tags: list[str]) -> list[str]:
    if not tags:
        return []
    import docker
    import docker.errors

    client = docker.from_env()
    failed = []
    try:
        for tag in tags:  # the server image first: it is built on the Debian one
            try:
                client.images.remove(tag)
            except docker.errors.DockerException as exc:
                failed.append(f"image {tag} ({exc}; a container may still use it: rag-conformance clean)")
    finally:
        client.close()
    return failed


def clean_engine_cache(*, yes: bool, alone: bool = True) -> int:
    """List the kit's engine cache entries and built images, and remove them when ``yes``.

    ``alone`` is False when the command line also asked for collections or containers. The exit code:
    0, or 2 when something could not be removed (or the options were mixed).
    """
    if not alone:
        print(
            "rag-conformance clean: --engine-cache works alone (with --yes); clean collections or "
            "containers in a second command",
            file=sys.stderr,
        )
        return 2
    from ..engines._local import cache_root

    root = cache_root()
    cache = _cache_entries(root)
    images, no_docker = _kit_images()
    if not cache.kit and not images:
        print(f"the engine cache {root} holds nothing of the kit's")
    for entry in cache.kit:
        print(f"{'removing' if yes else 'would remove'} {entry} ({_human(_size(entry))})")
    for tag, size in images:
        print(f"{'removing' if yes else 'would remove'} Docker image {tag} ({_human(size)})")
    for entry in cache.other:
        print(f"not the kit's, left alone: {entry}")
    if no_docker is not None:
        print(f"no Docker images checked: {no_docker}")
    if not yes:
        if cache.kit or images:
            print("nothing removed: run again with --yes to remove the above (engines download again on use)")
        return 0
    failed = []
    for entry in cache.kit:
        try:
            shutil.rmtree(entry)
        except OSError as exc:
            failed.append(f"{entry} ({exc.strerror or exc})")
    failed += _remove_images([tag for tag, _ in images])
    removed = len(cache.kit) + len(images) - len(failed)
    print(f"removed {removed} item{'s' * (removed != 1)} of the kit's engine cache and images")
    if failed:
        print(f"could not remove: {'; '.join(failed)}", file=sys.stderr)
        return 2
    return 0

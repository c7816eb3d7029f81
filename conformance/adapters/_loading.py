"""Finding and building the implementation to judge.

An adapter address is one of:

- ``reference``, or any name registered in the entry-point group ``rag_conformance.adapters``;
- ``module:attr``: an ``Implementation`` instance, a class, or a no-argument factory, from an installed
  package or the working directory;
- ``cmd:<command line>``: a program in any language speaking the stdio protocol
  (:class:`conformance.stdio.StdioAdapter`).
"""

from __future__ import annotations

import importlib
import os
import sys
from collections.abc import Mapping
from importlib.metadata import entry_points
from typing import Any

from ..boundary._decline import NotApplicable
from ..boundary._errors import AdapterLoadError
from ..boundary._implementation_base import is_placeholder
from ..boundary._protocol import ImplementationInfo

__all__ = [
    "CMD_PREFIX",
    "ENTRY_POINT_GROUP",
    "REQUIRED_METHODS",
    "LoadedAdapter",
    "load_adapter",
    "missing_methods",
]

ENTRY_POINT_GROUP = "rag_conformance.adapters"
CMD_PREFIX = "cmd:"
# The methods each capability needs. ``describe`` is always needed; ``close`` never is. A
# mode-qualified capability (``search:dense``) needs the methods of its base (``search``).
REQUIRED_METHODS: dict[str, tuple[str, ...]] = {
    "labels": ("canonicalize_label",),
    "quality": ("quality_score",),
    "post_process": ("post_process",),
    "search": ("prepare", "search"),
    "lookup": ("prepare", "lookup"),
}
_CAPABILITY_OF = {
    "canonicalize_label": "labels",
    "quality_score": "quality",
    "post_process": "post_process",
    "search": "search",
    "lookup": "lookup",
}


def load_adapter(
    spec: str, *, stdio_options: Mapping[str, Any] | None = None
) -> tuple[LoadedAdapter, ImplementationInfo]:
    """Build the implementation named by ``spec`` and ask it to describe itself.

    ``stdio_options`` (``timeout``, ``validate``, ``strict_stdout``, ``on_warning``, ``cwd``, ``env``)
    apply to ``cmd:`` specs only. Only the methods of the capabilities ``describe`` declares are
    required (see :data:`REQUIRED_METHODS`).
    """
    if spec.startswith(CMD_PREFIX):
        return _load_command(spec, stdio_options or {})
    target = _resolve(spec)
    try:
        implementation = _build(target)
    except Exception as exc:
        raise AdapterLoadError(f"adapter {spec!r}: building it raised {type(exc).__name__}: {exc}") from exc
    kind = type(implementation).__name__
    if not callable(getattr(implementation, "describe", None)):
        raise AdapterLoadError(
            f"adapter {spec!r} ({kind}) is not an implementation: it has no describe() method. Point "
            "--adapter at a class, factory or instance satisfying conformance.Implementation, e.g. a "
            "subclass of conformance.ImplementationBase"
        )
    try:
        info = ImplementationInfo.model_validate(_plain(implementation.describe()))
    except Exception as exc:
        raise AdapterLoadError(
            f"adapter {spec!r} ({kind}): describe() must return an ImplementationInfo "
            f"(name, version, capabilities); it gave {type(exc).__name__}: {exc}"
        ) from exc
    if info.language is None:
        info = info.model_copy(update={"language": "python"})  # in process, it is Python code
    missing = missing_methods(implementation, info)
    if missing:
        needs = "; ".join(f"capability {cap!r} needs {', '.join(names)}" for cap, names in missing.items())
        raise AdapterLoadError(
            f"adapter {spec!r} ({kind}) declares capabilities it does not implement: {needs}. "
            "Implement those methods, or declare fewer capabilities"
        )
    return LoadedAdapter(implementation, info), info


def _load_command(spec: str, options: Mapping[str, Any]) -> tuple[LoadedAdapter, ImplementationInfo]:
    from ..stdio import StdioAdapter  # lazy: in-process adapters never pay for the subprocess machinery

    adapter = StdioAdapter(spec[len(CMD_PREFIX) :], **options)
    try:
        info = adapter.describe()  # raises AdapterLoadError saying what went wrong, stderr included
    except BaseException:
        adapter.close()
        raise
    return LoadedAdapter(adapter, info), info


class LoadedAdapter:
    """The user's implementation, carrying the name it gave so every error message can say it.

    A Protocol method the implementation does not have declines (NOT APPLICABLE); the loader has
    already checked that every declared capability has its methods. ``close`` is optional.
    """

    def __init__(self, implementation: Any, info: ImplementationInfo) -> None:
        self.implementation = implementation
        self.info = info
        self.rqs_name = info.name

    def __getattr__(self, name: str) -> Any:
        try:
            return getattr(self.implementation, name)
        except AttributeError:
            if name not in _CAPABILITY_OF:
                raise
        capability = _CAPABILITY_OF[name]

        def declined(*args: Any) -> Any:
            raise NotApplicable(
                f"implementation {self.info.name!r} has no {name} (capability {capability!r} is not declared)"
            )

        return declined

    def close(self) -> None:
        close = getattr(self.implementation, "close", None)
        if callable(close):
            close()


def missing_methods(candidate: object, info: ImplementationInfo) -> dict[str, list[str]]:
    """Declared capability -> the methods it needs that ``candidate`` lacks (empty when complete).

    A method inherited unchanged from :class:`~conformance.ImplementationBase` (which declines) counts
    as missing for a declared capability.
    """
    missing: dict[str, list[str]] = {}
    for capability in sorted(str(c) for c in info.capabilities):
        for name in REQUIRED_METHODS.get(capability.partition(":")[0], ()):
            method = getattr(candidate, name, None)
            if not callable(method) or is_placeholder(method):
                missing.setdefault(capability, []).append(name)
    return missing


def _resolve(spec: str) -> Any:
    if not spec or not spec.strip():
        raise AdapterLoadError(
            "empty adapter address: give 'reference', an entry-point name or 'module:attr'"
        )
    if ":" in spec:
        module_name, _, attr = spec.partition(":")
        _importable_from_cwd()
        try:
            module = importlib.import_module(module_name)
        except Exception as exc:
            raise AdapterLoadError(
                f"adapter {spec!r}: cannot import module {module_name!r} "
                f"({type(exc).__name__}: {exc}); is it installed or on PYTHONPATH?"
            ) from exc
        obj: Any = module
        for part in attr.split("."):
            try:
                obj = getattr(obj, part)
            except AttributeError:
                raise AdapterLoadError(f"adapter {spec!r}: module {module_name!r} has no {attr!r}") from None
        return obj
    found = [ep for ep in entry_points(group=ENTRY_POINT_GROUP) if ep.name == spec]
    if not found:
        known = sorted({ep.name for ep in entry_points(group=ENTRY_POINT_GROUP)})
        raise AdapterLoadError(
            f"no adapter named {spec!r} in entry-point group {ENTRY_POINT_GROUP!r} "
            f"(known: {', '.join(known) or 'none'}); or pass 'module:attr'"
        )
    try:
        return found[0].load()
    except Exception as exc:
        raise AdapterLoadError(f"adapter {spec!r}: loading its entry point raised {exc!r}") from exc


def _importable_from_cwd() -> None:
    """Let ``module:attr`` name a module in the working directory, as ``python -m`` would.

    A console script such as ``rag-conformance`` does not put the working directory on ``sys.path``;
    appended (not prepended), it never shadows an installed package.
    """
    cwd = os.getcwd()
    if "" not in sys.path and cwd not in sys.path:
        sys.path.append(cwd)


def _build(target: Any) -> Any:
    """A class or a factory is called with no arguments; an object with ``describe`` is used as is."""
    if isinstance(target, type):
        return target()
    if callable(getattr(target, "describe", None)):
        return target
    if callable(target):
        return target()
    return target


def _plain(value: Any) -> Any:
    if hasattr(value, "model_dump"):
        return value.model_dump(by_alias=True)
    return value

"""Finding and building the implementation to judge.

An adapter spec is one of:

- ``reference``, or any name registered in the entry-point group ``rag_conformance.adapters``;
- ``module:attr``: an ``Implementation`` instance, a class, or a no-argument factory;
- ``cmd:<command line>``: a program in any language speaking the stdio protocol
  (:class:`conformance.stdio.StdioAdapter`).
"""

from __future__ import annotations

import importlib
from collections.abc import Mapping
from importlib.metadata import entry_points
from typing import Any

from ._errors import AdapterLoadError
from ._protocol import ImplementationInfo

__all__ = ["CMD_PREFIX", "ENTRY_POINT_GROUP", "LoadedAdapter", "load_adapter", "missing_methods"]

ENTRY_POINT_GROUP = "rag_conformance.adapters"
CMD_PREFIX = "cmd:"
_METHODS = (
    "describe",
    "canonicalize_label",
    "quality_score",
    "post_process",
    "prepare",
    "search",
    "lookup",
    "close",
)


def load_adapter(
    spec: str, *, stdio_options: Mapping[str, Any] | None = None
) -> tuple[LoadedAdapter, ImplementationInfo]:
    """Build the implementation named by ``spec`` and ask it to describe itself.

    ``stdio_options`` (``timeout``, ``validate``, ``cwd``, ``env``) apply to ``cmd:`` specs only.
    """
    if spec.startswith(CMD_PREFIX):
        return _load_command(spec, stdio_options or {})
    target = _resolve(spec)
    try:
        implementation = _build(target)
    except Exception as exc:
        raise AdapterLoadError(f"adapter {spec!r}: building it raised {type(exc).__name__}: {exc}") from exc
    missing = missing_methods(implementation)
    if missing:
        raise AdapterLoadError(
            f"adapter {spec!r} ({type(implementation).__name__}) does not satisfy the Implementation "
            f"Protocol: missing {', '.join(missing)}. Implement every method; raise nothing from the ones "
            "whose capability you do not declare, the kit never calls them"
        )
    try:
        info = ImplementationInfo.model_validate(_plain(implementation.describe()))
    except Exception as exc:
        raise AdapterLoadError(
            f"adapter {spec!r}: describe() must return an ImplementationInfo "
            f"(name, version, capabilities); it gave {type(exc).__name__}: {exc}"
        ) from exc
    return LoadedAdapter(implementation, info), info


def _load_command(spec: str, options: Mapping[str, Any]) -> tuple[LoadedAdapter, ImplementationInfo]:
    from .stdio import StdioAdapter  # lazy: in-process adapters never pay for the subprocess machinery

    adapter = StdioAdapter(spec[len(CMD_PREFIX) :], **options)
    try:
        info = adapter.describe()  # raises AdapterLoadError saying what went wrong, stderr included
    except BaseException:
        adapter.close()
        raise
    return LoadedAdapter(adapter, info), info


class LoadedAdapter:
    """The user's implementation, carrying the name it gave so every error message can say it."""

    def __init__(self, implementation: Any, info: ImplementationInfo) -> None:
        self.implementation = implementation
        self.info = info
        self.rqs_name = info.name

    def __getattr__(self, name: str) -> Any:
        return getattr(self.implementation, name)


def missing_methods(candidate: object) -> list[str]:
    """The Protocol methods ``candidate`` lacks (empty when it satisfies :class:`Implementation`)."""
    return [name for name in _METHODS if not callable(getattr(candidate, name, None))]


def _resolve(spec: str) -> Any:
    if not spec or not spec.strip():
        raise AdapterLoadError("empty adapter spec: give 'reference', an entry-point name or 'module:attr'")
    if ":" in spec:
        module_name, _, attr = spec.partition(":")
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

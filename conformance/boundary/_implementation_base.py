"""``ImplementationBase``: write only the methods of the capabilities you declare.

Every :class:`~conformance.Implementation` method of a capability the subclass does not declare
declines with :class:`~conformance.NotApplicable` (the kit never asks them anyway); ``prepare`` and
``close`` do nothing unless overridden. Declare with class attributes or override ``describe``::

    class MyAdapter(ImplementationBase):
        name = "mylib"
        version = "1.2.0"
        capabilities = ("labels", "quality")

        def canonicalize_label(self, label: str) -> str: ...
        def quality_score(self, request: QualityRequest) -> float: ...

The loader checks that every declared capability has its methods and names the capability when one
is left to this base class.
"""

from __future__ import annotations

from collections.abc import Collection
from typing import TYPE_CHECKING, Any, ClassVar

from . import _decline
from ._errors import AdapterLoadError
from ._protocol import (
    Capability,
    Corpus,
    ImplementationInfo,
    LookupReply,
    LookupRequest,
    MilvusEndpoint,
    PostProcessReply,
    PostProcessRequest,
    QualityRequest,
    SearchReply,
    SearchRequest,
)

if TYPE_CHECKING:
    from ._decline import NotApplicable

__all__ = ["ImplementationBase", "is_placeholder"]

_PLACEHOLDER = "__rqs_placeholder__"


def _placeholder(capability: str) -> Any:
    """Mark a base method as "not written by the subclass": it declines, naming ``capability``."""

    def mark(method: Any) -> Any:
        setattr(method, _PLACEHOLDER, capability)
        return method

    return mark


def is_placeholder(method: Any) -> bool:
    """Whether ``method`` is :class:`ImplementationBase`'s declining default (not overridden)."""
    return getattr(getattr(method, "__func__", method), _PLACEHOLDER, None) is not None


class ImplementationBase:
    """A base for in-process adapters: undeclared capabilities decline, ``prepare``/``close`` no-op.

    Subclasses set ``name``, ``version`` and ``capabilities`` (and optionally ``language`` and
    ``homepage``) as class attributes, or override :meth:`describe`. ``capabilities`` takes
    :class:`~conformance.Capability` members or their names: ``labels``, ``quality``,
    ``post_process``, ``search``, ``lookup``, or one search mode only, e.g. ``search:dense``.
    """

    name: ClassVar[str | None] = None
    version: ClassVar[str | None] = None
    capabilities: ClassVar[Collection[Capability | str]] = ()
    language: ClassVar[str] = "python"
    homepage: ClassVar[str | None] = None

    def describe(self) -> ImplementationInfo:
        """Name, version and capabilities from the class attributes."""
        cls = type(self)
        if not cls.name or not cls.version:
            raise AdapterLoadError(
                f"{cls.__name__} must say what it is: set the class attributes name and version "
                "(and capabilities), or override describe()"
            )
        return ImplementationInfo(
            name=cls.name,
            version=cls.version,
            language=cls.language,
            homepage=cls.homepage,
            capabilities=frozenset(Capability(str(c)) for c in cls.capabilities),
        )

    @_placeholder("labels")
    def canonicalize_label(self, label: str) -> str:
        raise self._declined("labels", "canonicalize_label")

    @_placeholder("quality")
    def quality_score(self, request: QualityRequest) -> float:
        raise self._declined("quality", "quality_score")

    @_placeholder("post_process")
    def post_process(self, request: PostProcessRequest) -> PostProcessReply:
        raise self._declined("post_process", "post_process")

    def prepare(self, endpoint: MilvusEndpoint, corpus: Corpus) -> None:
        """``search``/``lookup``: ingest the corpus. Does nothing unless overridden."""
        return None

    @_placeholder("search")
    def search(self, request: SearchRequest) -> SearchReply:
        raise self._declined("search", "search")

    @_placeholder("lookup")
    def lookup(self, request: LookupRequest) -> LookupReply:
        raise self._declined("lookup", "lookup")

    def close(self) -> None:
        """Release clients and drop what ``prepare`` created. Does nothing unless overridden."""
        return None

    def _declined(self, capability: str, method: str) -> NotApplicable:
        return _decline.not_applicable()(
            f"{type(self).__name__} does not implement {method} (capability {capability!r} is not declared)"
        )

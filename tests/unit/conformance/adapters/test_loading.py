"""Loading adapters: only the declared capabilities' methods are required, undeclared ones decline."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from conformance import (
    AdapterLoadError,
    Capability,
    Corpus,
    ImplementationBase,
    ImplementationInfo,
    MilvusEndpoint,
    NotApplicable,
    QualityRequest,
    load_adapter,
)
from conformance.adapters.reference import ReferenceAdapter

MODULE = '''\
from conformance import ImplementationBase, ImplementationInfo
from conformance.adapters.reference import ReferenceAdapter


class Labels(ImplementationBase):
    name = "labels-only"
    version = "1.0"
    capabilities = ("labels",)

    def canonicalize_label(self, label):
        return {"rrf_fused": "hybrid"}.get(label, "dense")


class ForgotTheMethod(ImplementationBase):
    name = "forgot"
    version = "1.0"
    capabilities = ("labels", "quality")

    def canonicalize_label(self, label):
        return "dense"


class Nameless(ImplementationBase):
    capabilities = ("labels",)


class Plain:
    """No base class: describe and the one method its capability needs; no close."""

    def describe(self):
        return {"name": "plain", "version": "2", "capabilities": ["labels"]}

    def canonicalize_label(self, label):
        return "dense"


class DenseSearchWithoutPrepare:
    def describe(self):
        return ImplementationInfo(name="dense", version="1", capabilities={"search:dense"})

    def search(self, request):
        return {"hits": []}


class NotAnImplementation:
    pass


class MyReference(ReferenceAdapter):
    pass
'''


@pytest.fixture
def adapters(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> str:
    """A module of adapters in the working directory, as a user's own file would be."""
    name = f"user_adapters_{tmp_path.name.replace('-', '_')}"
    (tmp_path / f"{name}.py").write_text(MODULE)
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(sys, "path", [p for p in sys.path if p not in ("", str(tmp_path))])
    return name


def test_a_module_in_the_working_directory_loads_and_undeclared_methods_decline(adapters: str) -> None:
    loaded, info = load_adapter(f"{adapters}:Labels")
    assert info.capabilities == frozenset({Capability.LABELS})
    assert loaded.canonicalize_label("rrf_fused") == "hybrid"
    with pytest.raises(NotApplicable, match="Labels does not implement quality_score") as caught:
        loaded.quality_score(QualityRequest(score_label="dense", score=0.1))
    assert "'quality' is not declared" in caught.value.reason
    endpoint = MilvusEndpoint(uri="x", collection_prefix="p_")
    assert loaded.prepare(endpoint, Corpus(name="c", dim=1, chunks=())) is None  # a no-op by default
    loaded.close()


def test_a_plain_class_needs_only_its_declared_methods(adapters: str) -> None:
    loaded, info = load_adapter(f"{adapters}:Plain")
    assert info.name == "plain"
    with pytest.raises(NotApplicable, match="has no lookup"):
        loaded.lookup(None)
    loaded.close()  # it has no close(): nothing to do


@pytest.mark.parametrize(
    ("attr", "needle"),
    [
        ("ForgotTheMethod", "capability 'quality' needs quality_score"),
        ("DenseSearchWithoutPrepare", "capability 'search:dense' needs prepare"),
        ("Nameless", "set the class attributes name and version"),
        ("NotAnImplementation", "is not an implementation: it has no describe() method"),
    ],
)
def test_what_is_missing_is_named_with_the_capability_that_needs_it(
    adapters: str, attr: str, needle: str
) -> None:
    with pytest.raises(AdapterLoadError) as caught:
        load_adapter(f"{adapters}:{attr}")
    assert needle in str(caught.value)


def test_the_reference_is_reference_and_a_subclass_goes_by_its_own_name(adapters: str) -> None:
    assert ReferenceAdapter().describe().name == "reference"
    _, info = load_adapter(f"{adapters}:MyReference")
    assert info.name == "MyReference"


def test_class_attributes_may_name_modes_and_capability_members() -> None:
    class Dense(ImplementationBase):
        name = "dense"
        version = "1"
        capabilities = (Capability.SEARCH_DENSE, "labels")

    info = Dense().describe()
    assert info == ImplementationInfo(
        name="dense",
        version="1",
        language="python",
        capabilities={Capability.SEARCH_DENSE, Capability.LABELS},
    )
    assert info.supports("search", "dense")
    assert not info.supports("search", "hybrid")


def test_an_unknown_capability_name_is_refused_by_name() -> None:
    class Typo(ImplementationBase):
        name = "typo"
        version = "1"
        capabilities = ("lables",)

    with pytest.raises(ValueError, match="'lables' is not a valid Capability"):
        Typo().describe()

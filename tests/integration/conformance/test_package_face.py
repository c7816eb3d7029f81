"""What an adapter author's ``import conformance`` loads: the boundary, not pytest or the runner.

``from conformance import ImplementationBase`` (and the wire models, and the errors) is the first line of
every Python adapter; it must not pay for the kit's upper floors. The rest of the face loads on first use.
"""

from __future__ import annotations

import json
import subprocess
import sys

import conformance

# The names an adapter author may import: the face is exactly these (a new one is a decision, not a slip).
PUBLIC = {
    "BASE_CAPABILITIES",
    "PURE_CAPABILITIES",
    "AdapterCallError",
    "AdapterLoadError",
    "Block",
    "Capability",
    "ConformanceError",
    "Corpus",
    "CorpusChunk",
    "Dropped",
    "EngineError",
    "Hints",
    "Hit",
    "Implementation",
    "ImplementationBase",
    "ImplementationInfo",
    "InvalidReplyError",
    "LookupReply",
    "LookupRequest",
    "MilvusEndpoint",
    "NotApplicable",
    "PostProcessConfig",
    "PostProcessReply",
    "PostProcessRequest",
    "QualityRequest",
    "Report",
    "RunOutcome",
    "SearchReply",
    "SearchRequest",
    "WireCandidate",
    "load_adapter",
    "run_conformance",
}


def _loaded_by(statement: str) -> list[str]:
    """The modules a fresh interpreter has loaded after ``statement``."""
    code = f"{statement}\nimport json, sys\nprint(json.dumps(sorted(sys.modules)))"
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    loaded: list[str] = json.loads(result.stdout)
    return loaded


def test_an_adapter_authors_import_loads_only_the_boundary() -> None:
    loaded = _loaded_by(
        "from conformance import ImplementationBase, ImplementationInfo, SearchReply, ConformanceError"
    )
    kit = [m for m in loaded if m.split(".")[0] == "conformance"]
    assert all(m == "conformance" or m.startswith("conformance.boundary") for m in kit), kit
    assert not [m for m in loaded if m.split(".")[0] in {"pytest", "_pytest", "pytest_bdd", "hypothesis"}]


def test_the_rest_of_the_face_loads_on_first_use() -> None:
    loaded = _loaded_by("import conformance\nconformance.run_conformance, conformance.NotApplicable")
    assert "conformance.commands._runner" in loaded
    assert "pytest" in loaded


def test_the_face_is_exactly_the_public_names_and_each_resolves() -> None:
    assert set(conformance.__all__) == PUBLIC
    assert len(conformance.__all__) == len(PUBLIC)
    for name in PUBLIC:
        assert getattr(conformance, name) is not None
    assert set(dir(conformance)) >= PUBLIC
    assert issubclass(conformance.NotApplicable, BaseException)

"""pytest plugin of the conformance kit (registered through the ``pytest11`` entry point).

Importing it must stay cheap: no pymilvus, no engine, no adapter. Everything heavy happens in fixtures.
"""

from __future__ import annotations

import pytest

GROUP = "rag-conformance"
OPT_ADAPTER = "--rqs-adapter"
OPT_MILVUS = "--rqs-milvus"
OPT_REPORT = "--rqs-report"


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup(GROUP, "rag-retrieval-quality-score conformance kit")
    group.addoption(
        OPT_ADAPTER,
        default=None,
        help="implementation to judge: 'reference', an entry-point name, or 'module:attr'",
    )
    group.addoption(
        OPT_MILVUS,
        default="lite",
        help="Milvus backend: lite | uri:<uri> | container[:image] (default: lite)",
    )
    group.addoption(OPT_REPORT, default=None, help="write the JSON report and JUnit XML into this directory")

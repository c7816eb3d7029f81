"""A password that happens to be one of the report's own words ("milvus", "notes") is hidden wherever it is
data, while the report keeps its shape: redacting the field name `milvus` made the report invalid, and a run
on a server whose password is `milvus` ended NOT JUDGED with a pydantic traceback."""

from __future__ import annotations

from conformance.boundary._redact import register_secret
from conformance.reporting import Environment, ScenarioResult, build_report
from conformance.reporting._redacted import redacted


def test_a_password_equal_to_a_field_name_is_hidden_in_data_and_the_report_stays_valid() -> None:
    register_secret("milvus")  # tests/conftest.py takes it back after this test
    environment = Environment(
        kit_version="0",
        spec_sha256=None,
        python="3.11",
        platform="linux",
        adapter={"name": "mine", "capabilities": ["labels"]},
        milvus={"backend": "uri", "uri": "http://root:milvus@host:19530", "milvus": "milvus"},
    )
    result = ScenarioResult(
        id="aliases",
        requirement="score-labels",
        requirement_id="score-labels",
        name="aliases",
        status="failed",
        message="the implementation echoed milvus",
        notes=("note about milvus",),
    )
    report = redacted(build_report([result], environment, requirement_order=["score-labels"]))
    assert report.environment.milvus is not None
    assert "milvus" not in report.environment.milvus["uri"]
    assert report.scenarios[0].message == "the implementation echoed ***"
    assert report.scenarios[0].notes == ("note about ***",)
    assert "milvus" not in str(report.environment.milvus.values())

"""One verdict sentence: when only derived scenarios fail, every view says so in the counts it prints."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from collections.abc import Sequence
from pathlib import Path

from conformance.boundary._protocol import (
    PURE_CAPABILITIES,
    Hints,
    ImplementationInfo,
    PostProcessConfig,
)
from conformance.commands._runner import run_conformance
from conformance.reporting import Report, format_table
from conformance.site._badge import badge
from tests.miniatures._miniature import Miniature, Scored


class EmptyIsNotLowQuality(Miniature):
    """Pure capabilities; calls a result with no accepted evidence not low quality. No spec scenario has
    an empty result (every one hands in candidates), so only derived scenarios can see it."""

    def describe(self) -> ImplementationInfo:
        return ImplementationInfo(
            name="EmptyIsNotLowQuality", version="0", language="python", capabilities=PURE_CAPABILITIES
        )

    def low_quality(
        self, top: float | None, config: PostProcessConfig, hints: Hints, accepted: Sequence[Scored]
    ) -> bool:
        return top is not None and top < config.reference_threshold


def test_a_run_whose_only_failures_are_derived_says_so_in_one_sentence_everywhere(tmp_path: Path) -> None:
    outcome = run_conformance(
        f"{__name__}:EmptyIsNotLowQuality", report_dir=tmp_path, pytest_args=["-m", "not rqs_engine_check"]
    )
    assert outcome.exit_code == 1
    data = json.loads((tmp_path / "report.json").read_text())
    report = Report.model_validate(data)
    broken = [s for s in report.scenarios if s.status in ("failed", "errored")]
    assert broken
    assert all(s.derived and not s.spec_hash for s in broken), [s.id for s in broken]
    tally = report.spec_scenarios
    assert tally.passed == tally.judged == 7  # pure capabilities: every spec scenario judged passed
    n = len(broken)
    clause = f"{n} derived scenario{'s' * (n != 1)} of R5 failed"
    sentence = (
        "DOES NOT CONFORM (pure capabilities: 7 of 12 spec scenarios judged, 7 passed, 1 more in part; "
    )
    assert report.verdict_text is not None
    assert report.verdict_text.startswith(sentence), report.verdict_text
    assert f"; {clause};" in report.verdict_text or report.verdict_text.endswith(f"; {clause})")
    table = format_table(report)
    assert f"verdict: {report.verdict_text}" in table
    assert "spec scenarios: 7 of 12 judged (1 more in part), 7 passed" in table
    derived_line = next(line for line in table.splitlines() if line.startswith("derived scenarios: "))
    assert derived_line.endswith(f" passed, {n} failed"), derived_line
    junit = ET.parse(tmp_path / "junit.xml").getroot()
    props = {p.get("name"): p.get("value") for p in junit.iter("property")}
    assert props["verdict_text"] == report.verdict_text
    assert props["derived_scenarios_failed"] == str(n)
    assert props["broken_outside_spec"] == clause
    assert badge(report)["message"] == f"7/12 passed, 5 not judged, {n} derived failed"
    assert badge(report)["color"] == "red"

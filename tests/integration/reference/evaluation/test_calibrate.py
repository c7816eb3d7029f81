"""Calibration on synthetic runs: the distances are chosen here, so the right answer is known."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import settings as hypothesis_settings
from hypothesis import strategies as st

from reference import (
    EvalRun,
    EvaluationError,
    Settings,
    calibrate,
    calibration_markdown,
    load_run,
    post_process,
)
from reference.evaluation._run import EvidenceRow, ModeOutcome, QueryOutcome, SourceInfo

SETTINGS = Settings()


def _rows(distances: list[float], mode: str) -> tuple[EvidenceRow, ...]:
    rows = []
    for rank, d in enumerate(distances, start=1):
        hybrid = mode == "hybrid"
        rows.append(
            EvidenceRow(
                doc_id=f"doc{rank}",
                chunk_index=0,
                original_rank=rank,
                score=1 / (60 + rank) if hybrid else d,
                score_label="hybrid" if hybrid else "dense",
                dense_distance=d if hybrid else None,
                quality_score=max(0.0, 1 - min(d, 2.0) / 2.0),
            )
        )
    return tuple(rows)


def _outcome(distances: list[float], mode: str) -> ModeOutcome:
    rows = _rows(distances, mode)
    result = post_process([r.candidate() for r in rows], SETTINGS)
    return ModeOutcome(
        path="unfiltered",
        retried=False,
        candidates=len(rows),
        ranking=tuple(r.evidence_key for r in rows),
        relevant_ranks={},
        evidence=rows,
        top_quality_score=result.top_quality_score,
        is_low_quality=result.is_low_quality,
        relevance_level=result.relevance_level,
        metrics={},
    )


def make_run(answerable: list[list[float]], unanswerable: list[list[float]]) -> EvalRun:
    """One query per distance list; answerable queries label their first evidence chunk as the answer."""
    outcomes = []
    for i, distances in enumerate(answerable + unanswerable):
        is_answerable = i < len(answerable)
        outcomes.append(
            QueryOutcome(
                id=f"q{i}",
                query=f"query {i}",
                kind="standard" if is_answerable else "unanswerable",
                relevant={"doc1#0": 2} if is_answerable else {},
                modes={"dense": _outcome(distances, "dense"), "hybrid": _outcome(distances, "hybrid")},
            )
        )
    info = SourceInfo(path="synthetic", sha256="0" * 64, rows=len(outcomes))
    return EvalRun(
        created="2026-01-01T00:00:00+00:00",
        version="test",
        embedder="synthetic",
        engine="none",
        corpus=info,
        queries=info,
        categories=(),
        settings=SETTINGS.as_dotted(),
        modes=("dense", "hybrid"),
        ks=(1, 5),
        label_check_depth=5,
        seconds={},
        outcomes=tuple(outcomes),
    )


# Squared L2 for unit vectors: quality = 1 - d / 2 at maxL2 2. Answerable top qualities 0.8..0.6,
# unanswerable 0.35..0.2: every threshold in (0.35, 0.6] separates them.
SEPARABLE = make_run(
    answerable=[[0.4, 1.0], [0.6, 0.7], [0.8, 1.5]],
    unanswerable=[[1.3, 1.6], [1.5], [1.6, 1.9]],
)


def test_separable_classes_get_a_perfect_threshold_between_them() -> None:
    cal = calibrate(SEPARABLE)
    dense = cal.case("dense", 2.0)
    assert dense.best is not None
    assert dense.best.scores.youden_j == pytest.approx(1.0)
    assert 0.35 < dense.best.threshold <= 0.6
    assert dense.answerable.minimum == pytest.approx(0.6)
    assert dense.unanswerable.maximum == pytest.approx(0.35)


def test_the_suggestion_is_valid_settings_with_highly_relevant_above_reference() -> None:
    cal = calibrate(SEPARABLE)
    for suggestion in cal.suggestions[:2]:
        keys = suggestion.settings
        assert set(keys) == {
            "rag.max-l2-distance",
            "rag.reference-threshold",
            "rag.highly-relevant-threshold",
        }
        assert keys["rag.highly-relevant-threshold"] >= keys["rag.reference-threshold"]
        Settings.from_mapping({**SETTINGS.as_dotted(), **keys})  # raises if not valid


def test_the_best_threshold_is_in_the_middle_of_the_widest_plateau() -> None:
    case = calibrate(SEPARABLE).case("dense", 2.0)
    assert case.best is not None
    perfect = [p.threshold for p in case.sweep if p.scores.youden_j == pytest.approx(1.0)]
    assert case.best.threshold == perfect[(len(perfect) - 1) // 2]


def test_rank_only_hybrid_quality_cannot_separate_anything() -> None:
    cal = calibrate(SEPARABLE)
    rank_only = cal.case("hybrid-rank-only", 2.0)
    assert set(rank_only.answerable.values) == set(rank_only.unanswerable.values) == {1.0}
    assert rank_only.best is None
    suggestion = cal.suggestions[-1]
    assert suggestion.variant == "hybrid-rank-only"
    assert suggestion.settings == {}
    assert "better than chance" in suggestion.note


def test_indistinguishable_classes_get_no_suggestion() -> None:
    same = make_run(answerable=[[0.8], [1.2]], unanswerable=[[0.8], [1.2]])
    cal = calibrate(same)
    assert all(s.settings == {} for s in cal.suggestions)


def test_one_class_only_is_an_error() -> None:
    with pytest.raises(EvaluationError, match="only one class"):
        calibrate(make_run(answerable=[[0.5]], unanswerable=[]))


def test_current_point_is_the_gate_the_run_recorded() -> None:
    # Recomputing quality with post_process must reproduce the lookup's own gate at the run's settings.
    cal = calibrate(SEPARABLE)
    for mode in ("dense", "hybrid"):
        flagged = [o.modes[mode].is_low_quality for o in SEPARABLE.outcomes]
        truth = [not o.answerable for o in SEPARABLE.outcomes]
        current = cal.case(mode, 2.0).current.scores
        assert current.tp == sum(f and t for f, t in zip(flagged, truth, strict=True))
        assert current.fp == sum(f and not t for f, t in zip(flagged, truth, strict=True))


@hypothesis_settings(max_examples=30)  # each example calibrates a whole run
@given(
    st.lists(st.floats(0.0, 3.9), min_size=1, max_size=4),
    st.lists(st.floats(0.0, 3.9), min_size=1, max_size=4),
)
def test_flags_only_grow_with_the_threshold(a: list[float], u: list[float]) -> None:
    case = calibrate(make_run([a], [u]), max_l2_distances=(2.0,)).case("dense", 2.0)
    flagged = [p.scores.tp + p.scores.fp for p in case.sweep]
    assert flagged == sorted(flagged)


def test_maxl2_and_threshold_are_one_knob_when_nothing_clamps() -> None:
    # Distances all below 1.5: at maxL2 >= 1.5 no quality clamps to 0, so the separation is the same.
    run = make_run(answerable=[[0.2], [0.5], [0.9]], unanswerable=[[0.7], [1.2], [1.4]])
    cal = calibrate(run, max_l2_distances=(1.5, 2.0, 3.0))
    js = {m: cal.case("dense", m).best.scores.youden_j for m in (1.5, 2.0, 3.0)}  # type: ignore[union-attr]
    assert js[1.5] == pytest.approx(js[2.0])
    assert js[2.0] == pytest.approx(js[3.0])


def test_progress_is_reported_before_and_after_every_case() -> None:
    calls: list[tuple[int, int]] = []
    cal = calibrate(SEPARABLE, progress=lambda done, total: calls.append((done, total)))
    assert len(cal.cases) == 11  # 5 maxL2 values x dense and hybrid, and hybrid rank-only
    assert calls == [(i, 11) for i in range(12)]


def test_the_configured_maxl2_is_always_compared() -> None:
    cal = calibrate(SEPARABLE, max_l2_distances=(1.0,))
    assert cal.max_l2_distances == (1.0, 2.0)


def test_a_bad_maxl2_is_a_setting_error() -> None:
    from reference import InvalidMaxL2DistanceError

    with pytest.raises(InvalidMaxL2DistanceError):
        calibrate(SEPARABLE, max_l2_distances=(0.0,))


def test_markdown_shows_the_suggested_toml_and_the_images() -> None:
    cal = calibrate(SEPARABLE)
    text = calibration_markdown(cal, {"Threshold sweep": "calibration-sweep.png"})
    best = cal.suggestions[0].settings["rag.reference-threshold"]
    assert "```toml" in text
    assert f"rag.reference-threshold = {best:g}" in text
    assert "rag.max-l2-distance = 2.0\n" in text  # a TOML float, not the integer 2
    assert "![Threshold sweep](calibration-sweep.png)" in text
    assert "No suggestion: no threshold separates" in text  # the rank-only variant


def test_plots_are_png_files(tmp_path: Path) -> None:
    pytest.importorskip("matplotlib", reason="the plot extra (matplotlib) is not installed")
    from reference import write_plots

    images = write_plots(calibrate(SEPARABLE), tmp_path)
    assert len(images) == 3
    for name in images.values():
        data = (tmp_path / name).read_bytes()
        assert data[:8] == b"\x89PNG\r\n\x1a\n"
        assert len(data) > 10_000  # drawn, not an empty canvas


def test_plotting_without_matplotlib_is_a_clear_error(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    import sys

    from reference import PlottingUnavailableError, write_plots

    monkeypatch.setitem(sys.modules, "matplotlib.figure", None)
    with pytest.raises(PlottingUnavailableError, match=r"\[plot\]"):
        write_plots(calibrate(SEPARABLE), tmp_path)


# -- reading a run back ------------------------------------------------------------------------------


def test_a_run_survives_the_json_round_trip(tmp_path: Path) -> None:
    path = tmp_path / "evaluation.json"
    path.write_text(json.dumps({"run": SEPARABLE.model_dump(mode="json")}))
    assert load_run(path) == SEPARABLE
    assert calibrate(load_run(path)) == calibrate(SEPARABLE)


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ("{not json", r"evaluation.json:1: not valid JSON"),
        ('{"summary": {}}', r"not an evaluation report"),
        ('{"run": {"format": 99}}', r"run format 99, this version reads 2"),
        ('{"run": {"format": 1}}', r"run format 1, this version reads 2; evaluate again"),
        ('{"run": {"format": 2, "created": 3}}', r"evaluation.json: run\.created"),
    ],
)
def test_a_bad_run_file_says_what_is_wrong(tmp_path: Path, content: str, message: str) -> None:
    path = tmp_path / "evaluation.json"
    path.write_text(content)
    with pytest.raises(EvaluationError, match=message):
        load_run(path)


def test_a_missing_run_file_is_an_error(tmp_path: Path) -> None:
    with pytest.raises(EvaluationError, match="cannot open the file"):
        load_run(tmp_path / "nope.json")

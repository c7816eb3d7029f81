"""``upgrade``'s in-place options refuse what cannot work before anything starts (exit 2, said why)."""

from __future__ import annotations

from pathlib import Path

import pytest

from conformance.commands._cli import main


def test_the_in_place_options_need_in_place(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code = main(
        ["upgrade", "--from", "lite", "--to", "lite", "--data-dir", str(tmp_path), "--out", str(tmp_path)]
    )
    assert code == 2
    assert "go with --in-place" in capsys.readouterr().err


@pytest.mark.parametrize(
    ("old", "new", "said"),
    [
        ("lite-2.5.1", "milvus-2.3.5", "keep their data in different forms"),
        ("uri:http://127.0.0.1:9", "lite", "takes lite and the engine lines"),
        ("container", "lite", "takes lite and the engine lines"),
    ],
)
def test_in_place_between_engines_that_share_no_data_is_refused(
    old: str, new: str, said: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code = main(["upgrade", "--from", old, "--to", new, "--in-place-only", "--out", str(tmp_path / "o")])
    assert code == 2
    assert said in capsys.readouterr().err
    assert not (tmp_path / "o").exists()


def test_a_data_dir_that_is_not_one_is_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    missing = tmp_path / "nope"
    code = main(["upgrade", "--from", "lite", "--to", "lite", "--in-place", "--data-dir", str(missing)])
    assert code == 2
    assert "is not a directory" in capsys.readouterr().err


def _fake_check(monkeypatch: pytest.MonkeyPatch, verdict: str, later_exit: int) -> list[str]:
    """The in-place part answers ``verdict``; the comparison on fresh engines exits ``later_exit``."""
    from types import SimpleNamespace

    from conformance import upgrade
    from conformance.commands import _upgrade

    calls: list[str] = []

    def check_in_place(old: str, new: str, *args: object, **kwargs: object) -> upgrade.InPlaceResult:
        calls.append("in place")
        return upgrade.InPlaceResult(old=old, new=new, verdict=verdict, engine_words="E", advice="A")

    def run_upgrade(*args: object, **kwargs: object) -> tuple[object, list[Path]]:
        calls.append("fresh")
        return SimpleNamespace(exit_code=later_exit), []

    monkeypatch.setattr(upgrade, "check_in_place", check_in_place)
    monkeypatch.setattr(upgrade, "run_upgrade", run_upgrade)
    monkeypatch.setattr(_upgrade, "_summary", lambda result, written: [f"verdict: FRESH {result.exit_code}"])
    return calls


@pytest.mark.parametrize(
    ("verdict", "later", "calls", "code", "last"),
    [
        ("CANNOT OPEN", 0, ["in place"], 1, "verdict in place: CANNOT OPEN"),  # nothing more runs
        ("CHANGED", 0, ["in place", "fresh"], 1, "verdict in place: CHANGED"),  # said last, for CI logs
        ("UNCHANGED", 1, ["in place", "fresh"], 1, "verdict: FRESH 1"),
        ("UNCHANGED", 0, ["in place", "fresh"], 0, "verdict: FRESH 0"),
    ],
)
def test_in_place_comes_first_and_its_verdict_joins_the_exit_code(
    verdict: str,
    later: int,
    calls: list[str],
    code: int,
    last: str,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    made = _fake_check(monkeypatch, verdict, later)
    assert (
        main(["upgrade", "--from", "lite-2.5.1", "--to", "lite", "--in-place", "--out", str(tmp_path)])
        == code
    )
    assert made == calls
    assert capsys.readouterr().out.strip().splitlines()[-1].startswith(last)
    assert (tmp_path / "in-place.json").is_file()

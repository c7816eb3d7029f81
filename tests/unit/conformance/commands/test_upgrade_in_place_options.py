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

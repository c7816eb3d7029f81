"""The image build's Debian mirror: the environment's choice first, else the one apt's sources name, in
either of apt's two source formats."""

from __future__ import annotations

import pytest

from conformance.engines._image import _MIRROR_LINE, MIRROR_ENV, debian_mirror


@pytest.mark.parametrize(
    ("source", "mirror"),
    [
        ("deb http://deb.debian.org/debian bookworm main\n", "http://deb.debian.org/debian"),
        (
            "deb [arch=amd64 signed-by=/k.gpg] http://m.example/debian/ bookworm main\n",
            "http://m.example/debian",
        ),
        (
            "Types: deb\nURIs: http://mirror.example/debian\nSuites: bookworm\n",
            "http://mirror.example/debian",
        ),
    ],
)
def test_a_mirror_is_read_from_either_source_format(source: str, mirror: str) -> None:
    assert [match.group(1) for match in _MIRROR_LINE.finditer(source)] == [mirror]


def test_a_security_or_foreign_source_is_no_debian_mirror() -> None:
    assert list(_MIRROR_LINE.finditer("deb http://security.example/debian-security bookworm main\n")) == []


def test_the_environment_wins(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(MIRROR_ENV, "http://mine.example/debian")
    assert debian_mirror() == "http://mine.example/debian"

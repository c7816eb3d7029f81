"""TREC run and qrels files: one writer and one reader of each, for trec_eval, ir_measures and ranx.

- a run file: ``qid Q0 docid rank score tag``, one line per ranked document, best first. The score
  counts down from the ranking's length to 1 (:func:`evaluation.run_scores`): the tools order a run by
  score and break ties by docid, so an engine's own scores (RRF ties often) would not keep the order
  that was measured;
- a qrels file: ``qid 0 docid grade``, one line per judged document of an answerable query.

The files are whitespace-separated, so an id that is empty or holds whitespace cannot be written: the
writers refuse it (:class:`TrecIdError`) rather than write a line trec_eval splits differently; the
labelled-set readers refuse such ids before anything runs. The readers check every line's fields, so
what they read back is what was written.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path

from ._errors import EvaluationError
from ._metrics import run_scores

__all__ = [
    "QRELS_FILE",
    "TrecIdError",
    "ir_measures_command",
    "qrels_lines",
    "read_qrels",
    "read_run",
    "run_lines",
    "write_qrels",
    "write_run",
    "write_trec",
]

QRELS_FILE = "qrels.txt"
_SPACE = re.compile(r"\s")
Docid = Callable[[str], str]


class TrecIdError(EvaluationError):
    """An id a TREC file cannot carry (empty, or holding whitespace)."""


def _token(value: str, what: str) -> str:
    if not value or _SPACE.search(value):
        raise TrecIdError(
            f"{what} {value!r} is empty or holds whitespace, which TREC run and qrels files cannot carry; "
            "rename it without spaces, tabs or line breaks"
        )
    return value


def _same(key: str) -> str:
    return key


def run_lines(rankings: Mapping[str, Sequence[str]], *, tag: str, docid: Docid = _same) -> Iterable[str]:
    """The lines of a run file for ``rankings`` (query id -> ids, best first; an id counts once)."""
    _token(tag, "run tag")
    for qid, ranking in rankings.items():
        _token(qid, "query id")
        for rank, (key, score) in enumerate(run_scores(ranking).items(), start=1):
            yield f"{qid} Q0 {_token(docid(key), 'document id')} {rank} {score:g} {tag}\n"


def write_run(
    path: str | Path, rankings: Mapping[str, Sequence[str]], *, tag: str, docid: Docid = _same
) -> Path:
    """Write a run file; ``docid`` maps the rankings' ids to the file's. Returns the path."""
    out = Path(path)
    out.write_text("".join(run_lines(rankings, tag=tag, docid=docid)), encoding="utf-8")
    return out


def qrels_lines(qrels: Mapping[str, Mapping[str, int]], *, docid: Docid = _same) -> Iterable[str]:
    """The lines of a qrels file (query id -> id -> grade, in the mapping's order)."""
    for qid, grades in qrels.items():
        _token(qid, "query id")
        for key, grade in grades.items():
            yield f"{qid} 0 {_token(docid(key), 'document id')} {grade}\n"


def write_qrels(path: str | Path, qrels: Mapping[str, Mapping[str, int]], *, docid: Docid = _same) -> Path:
    """Write a qrels file; ``docid`` maps the labels' ids to the file's. Returns the path."""
    out = Path(path)
    out.write_text("".join(qrels_lines(qrels, docid=docid)), encoding="utf-8")
    return out


def write_trec(
    out_dir: str | Path,
    qrels: Mapping[str, Mapping[str, int]],
    runs: Mapping[str, tuple[str, Mapping[str, Sequence[str]]]],
    *,
    docid: Docid = _same,
    write: Callable[[Path, str], object] | None = None,
) -> list[Path]:
    """``qrels.txt`` and one run file per entry of ``runs`` (file name -> (tag, rankings)) in ``out_dir``.

    Every id is checked before anything is written, so a bad id leaves no half-written folder.
    ``write(path, text)`` writes one file (a caller's atomic writer, say); UTF-8 ``write_text`` by default.
    """
    texts = {QRELS_FILE: "".join(qrels_lines(qrels, docid=docid))}
    texts |= {
        name: "".join(run_lines(rankings, tag=tag, docid=docid)) for name, (tag, rankings) in runs.items()
    }
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    for name, text in texts.items():
        if write is None:
            (out / name).write_text(text, encoding="utf-8")
        else:
            write(out / name, text)
    return [out / name for name in texts]


def _fields(path: Path, count: int, what: str) -> Iterable[tuple[int, list[str]]]:
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except OSError as exc:
        raise EvaluationError(f"{path}: cannot open the file: {exc.strerror or exc}") from None
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        fields = line.split()
        if len(fields) != count:
            raise EvaluationError(f"{path}:{number}: {len(fields)} fields; a {what} line has {count}")
        yield number, fields


def read_run(path: str | Path) -> dict[str, dict[str, float]]:
    """A run file as query id -> document id -> score (the form ir_measures and pytrec_eval take)."""
    out: dict[str, dict[str, float]] = {}
    for number, (qid, _, doc, _, score, _) in _fields(Path(path), 6, "run (qid Q0 docid rank score tag)"):
        try:
            out.setdefault(qid, {})[doc] = float(score)
        except ValueError:
            raise EvaluationError(f"{path}:{number}: score {score!r} is not a number") from None
    return out


def read_qrels(path: str | Path) -> dict[str, dict[str, int]]:
    """A qrels file as query id -> document id -> grade."""
    out: dict[str, dict[str, int]] = {}
    for number, (qid, _, doc, grade) in _fields(Path(path), 4, "qrels (qid 0 docid grade)"):
        try:
            out.setdefault(qid, {})[doc] = int(grade)
        except ValueError:
            raise EvaluationError(f"{path}:{number}: grade {grade!r} is not a whole number") from None
    return out


def ir_measures_command(run_file: str, names: Iterable[str]) -> str:
    """The ``ir_measures`` command line that recomputes ``names`` from ``qrels.txt`` and ``run_file``."""
    return f"ir_measures {QRELS_FILE} {run_file} {' '.join(names)}"

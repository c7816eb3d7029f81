"""The labelled set of ``rag-conformance upgrade``, read by the judge itself, and its embedder.

The set is read in the BEIR layout (``corpus.jsonl``, ``queries.jsonl``, ``qrels/<split>.tsv``), the
field's common format; the bundled set ships in it too (``evaluation/data/beir``, found on disk
without importing the reference, which the judge must not do outside its adapter). A BEIR ``_id`` of the
form ``docId#chunkIndex`` keeps the chunk's identity; any other ``_id`` is one document of one chunk.

The embedder is the judge's, so both engines see the same vectors whatever the adapter is:
wordllama's ``l2_supercat`` model (256 dimensions) from the files inside its wheel, never downloaded.
"""

from __future__ import annotations

import csv
import importlib.util
import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from ..boundary._errors import ConformanceError

__all__ = ["LabelledQuery", "LabelledSet", "UpgradeInputError", "bundled_set_dir", "embed", "load_beir"]


class UpgradeInputError(ConformanceError):
    """The labelled set, the settings or the embedder cannot be used as given; the message says why."""


@dataclass(frozen=True)
class LabelledQuery:
    id: str
    text: str
    kind: str = "query"
    category: str | None = None
    relevant: dict[str, int] = field(default_factory=dict)  # evidence key -> grade; {} = unanswerable


@dataclass(frozen=True)
class Chunk:
    doc_id: str
    chunk_index: int
    text: str
    category: str | None = None
    source_type: str | None = None

    @property
    def key(self) -> str:
        return f"{self.doc_id}#{self.chunk_index}"


@dataclass(frozen=True)
class LabelledSet:
    name: str
    chunks: tuple[Chunk, ...]
    queries: tuple[LabelledQuery, ...]

    def limited(self, limit: int | None) -> LabelledSet:
        """At most ``limit`` queries, taken in turn from each kind, so a small set keeps every kind."""
        if limit is None or limit >= len(self.queries):
            return self
        kinds = list(dict.fromkeys(q.kind for q in self.queries))
        queues = {k: [q for q in self.queries if q.kind == k] for k in kinds}
        picked: set[str] = set()
        while len(picked) < limit:
            for kind in kinds:
                if queues[kind] and len(picked) < limit:
                    picked.add(queues[kind].pop(0).id)
        kept = tuple(q for q in self.queries if q.id in picked)
        return LabelledSet(self.name, self.chunks, kept)


def bundled_set_dir() -> Path:
    """The bundled labelled set in the BEIR layout, located without importing the reference."""
    spec = importlib.util.find_spec("reference")  # finds the package; does not execute it
    locations = list(spec.submodule_search_locations or []) if spec else []
    for location in locations:
        candidate = Path(location) / "data" / "eval" / "beir"
        if (candidate / "corpus.jsonl").is_file():
            return candidate
    raise UpgradeInputError(
        "the bundled labelled set (evaluation/data/beir) is not installed here; pass --beir DIR"
    )


def _jsonl(path: Path) -> list[dict[str, object]]:
    if not path.is_file():
        raise UpgradeInputError(f"{path} is missing: a BEIR dataset has corpus.jsonl, queries.jsonl, qrels/")
    rows = []
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
        except json.JSONDecodeError as exc:
            raise UpgradeInputError(f"{path}:{number} is not JSON: {exc}") from None
        if not isinstance(row, dict) or not isinstance(row.get("_id"), str):
            raise UpgradeInputError(f"{path}:{number} needs a string '_id'")
        rows.append(row)
    return rows


def _chunk(row: dict[str, object]) -> Chunk:
    key = str(row["_id"])
    doc, sep, index = key.rpartition("#")
    metadata = row.get("metadata") if isinstance(row.get("metadata"), dict) else {}
    assert isinstance(metadata, dict)
    title, text = str(row.get("title") or ""), str(row.get("text") or "")
    body = f"{title} {text}" if title.strip() else text
    category = metadata.get("category")
    source = metadata.get("sourceType")
    if sep and doc and index.isdigit():
        return Chunk(doc, int(index), body, category and str(category), source and str(source))
    return Chunk(key, 0, body, category and str(category), source and str(source))


def load_beir(directory: str | Path, *, split: str = "test", name: str | None = None) -> LabelledSet:
    """Read a BEIR-layout dataset: the queries judged in ``qrels/<split>.tsv`` (grade 0: not relevant),
    and those with no qrels line whose metadata says ``"kind": "unanswerable"`` (nothing answers them)."""
    root = Path(directory)
    rows = _jsonl(root / "corpus.jsonl")
    chunks = tuple(_chunk(row) for row in rows)
    key_of = {str(row["_id"]): chunk.key for row, chunk in zip(rows, chunks, strict=True)}
    qrels_path = root / "qrels" / f"{split}.tsv"
    if not qrels_path.is_file():
        raise UpgradeInputError(f"{qrels_path} is missing: the split {split!r} has no qrels")
    judged: dict[str, dict[str, int]] = {}
    with qrels_path.open(encoding="utf-8", newline="") as handle:
        for number, cells in enumerate(csv.reader(handle, delimiter="\t"), 1):
            if number == 1 and cells[:1] == ["query-id"]:
                continue
            if len(cells) < 3:
                raise UpgradeInputError(f"{qrels_path}:{number} needs query-id, corpus-id and score")
            qid, doc, score = cells[0], cells[1], cells[-1]
            if doc not in key_of:
                raise UpgradeInputError(f"{qrels_path}:{number} judges {doc!r}, which the corpus lacks")
            try:
                grade = int(score)
            except ValueError:
                raise UpgradeInputError(f"{qrels_path}:{number}: score {score!r} is not an integer") from None
            entry = judged.setdefault(qid, {})
            if grade > 0:
                entry[key_of[doc]] = grade
    queries = []
    for row in _jsonl(root / "queries.jsonl"):
        qid = str(row["_id"])
        metadata = row.get("metadata") if isinstance(row.get("metadata"), dict) else {}
        assert isinstance(metadata, dict)
        # BEIR's qrels list what answers a query; only the metadata can say that nothing does.
        if qid not in judged and metadata.get("kind") != "unanswerable":
            continue
        category = metadata.get("category")
        queries.append(
            LabelledQuery(
                qid,
                str(row.get("text") or ""),
                str(metadata.get("kind") or "query"),
                str(category) if category else None,
                judged.get(qid, {}),
            )
        )
    if not queries:
        raise UpgradeInputError(f"no query of {root / 'queries.jsonl'} is judged in {qrels_path}")
    return LabelledSet(name or root.name, chunks, tuple(queries))


def embed(texts: Sequence[str]) -> list[tuple[float, ...]]:
    """Unit-length 256-d wordllama vectors; a text the tokenizer leaves empty is the zero vector."""
    import numpy as np

    model = _wordllama()
    if not texts:
        return []
    vectors = np.asarray(model.embed(list(texts), norm=False), dtype=np.float32)
    norms = np.linalg.norm(vectors, axis=1, keepdims=True)
    vectors = np.divide(vectors, norms, out=np.zeros_like(vectors), where=norms > 0)
    return [tuple(row) for row in vectors.tolist()]


EMBEDDER = "wordllama l2_supercat, 256 dimensions"


def _wordllama():  # type: ignore[no-untyped-def]  # wordllama ships no type hints
    try:
        import wordllama
        from wordllama import WordLlama
    except ImportError:
        raise UpgradeInputError(
            "the upgrade check embeds its labelled set with wordllama, which is not installed; "
            "pip install 'rag-quality-conformance[embed]'"
        ) from None
    folder = Path(wordllama.__file__).parent
    # wordllama 0.4 looks for its tokenizer under tokenizer/ while the wheel has tokenizers/, then tries
    # to download it: its own folder as cache_dir, with downloads off, finds both files offline.
    try:
        return WordLlama.load(config="l2_supercat", cache_dir=folder, dim=256, disable_download=True)
    except (OSError, ValueError, RuntimeError) as exc:
        raise UpgradeInputError(f"cannot load the wordllama model from {folder}: {exc}") from None

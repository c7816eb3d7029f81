"""A knowledge base like a real team's, generated per run from the run's seed, beside the scenario corpus.

The hand-made scenario corpus answers the scenarios' questions; it cannot show faults that only real data
shows. This part varies what a real knowledge base has: documents of one chunk and of a dozen, category
values as teams write them (spaces, quotes, backslashes, other scripts, one a prefix of another), chunks
without a category, document ids that are paths, UUIDs or titles (one with ``#``), texts in several
scripts with punctuation and emoji, chunks that tie for a query, a category of one chunk. Its queries
(:class:`KbQuery`) come in every shape: a keyword, a keyword among words nothing contains, blank,
punctuation only, long, quoted.

It lives in the same collection as the scenario corpus without moving any scenario's answer: its vectors
lean away from the scenario questions' axes (every scenario chunk is nearer to every scenario question),
its categories differ from theirs, and its words are not theirs.

Keyword (BM25) answers are kept analyzer-proof, because the spec names no analyzer: a query's keyword is
a lowercase ASCII pseudo-word that no stemmer or stop list changes, it occurs only in chunks made of
exactly ten such words with distinct term counts, and every other word of a query is in no text at all.
Any analyzer that splits on spaces and punctuation then gives the same BM25 order, whatever its k1 and b.
Hybrid queries are built without near-ties in their dense order, so float32 noise cannot reorder RRF.
"""

from __future__ import annotations

import itertools
import math
import random
import re
import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass, replace

import numpy as np

from ..boundary._protocol import CorpusChunk, EngineFacts
from ._hostile_part import hostile_chunks, tie_pairs

__all__ = [
    "EXTRA_DIMS",
    "SEVERAL_CATEGORIES_DOC",
    "KbQuery",
    "KnowledgeBase",
    "generate",
    "identifier_twin",
]

EXTRA_DIMS = 23  # dimensions of the generated part, after the scenario corpus's
_SCENARIO_QUERY_AXES = (0, 1, 7, 8)  # the scenario questions' directions (see _corpus)
_LEAN = 0.15  # generated chunks lean this far away from each scenario question (its chunks: >= -0.14)
_TEXT_TOKENS = 10
_MAX_K = 30  # the largest k a generated request asks for
SEVERAL_CATEGORIES_DOC = "doc1"  # its twelve chunks carry two categories and none
_COLLIDING_DOC = "doc11"  # beside doc1: doc1/11 and doc11/1 are both "doc111" when concatenated
_MANY_CHUNKS = 12  # doc1's chunks: a document of a dozen (and doc1/11 exists)
_TINY_CHUNKS = 1  # the one document of the tiny category: a category of one chunk
_SIZES = (1, 1, 1, 2, 2, 3, 3, 4, 5, 8, 12)  # chunk counts of the other documents
_KEYWORD_SCRIPT = "cyrillic"  # two keywords in another script: a query in it is searched by BM25 too
_NEAR_TIES = 2  # queries at the same distance, in reals, from chunks of two documents (dense mode only)
_GAP = 1e-4  # the smallest dense gap a hybrid query's ranking may have (float32 noise is ~1e-6)

# Category values as teams write them, by what they test in a filter; every run draws one of each kind.
_CATEGORY_KINDS = (
    ("Customer Support", "billing & invoices", "FAQ archive", "Время доставки"),  # spaces
    ("O'Reilly Media", 'say "cheese"'),  # quotes
    ("C:\\shares\\kb",),  # a backslash: every run (a filter that escapes quotes only breaks on it)
    ("tier-1/escalations", "50% off_sale"),  # a slash; LIKE's wildcards, which an exact match keeps
    ("line\nbreak", "tab\there"),  # control characters
    ("产品文档", "Ünïcode-Kategorie"),  # other scripts
    ("faq", "kb"),  # plain, and a prefix of another ("FAQ archive" casefolds to "faq archive")
    # Leading and trailing spaces, every run: a filter that trims the category finds none of its chunks
    # (no other category differs from these only in spacing, readings 21).
    (" padded ", "trailing space ", " leading space"),
)
# No chunk carries these. The second is a prefix of the backslash category every run holds: explicit
# searches filter by it (a filter matching by prefix or LIKE finds that category's chunks).
_ABSENT = ("Legal / Compliance", "C:\\shares", "archivé", "faq-old", "Customer", "产品")
# The slash kind's category, every character but ASCII letters, digits and "_" made "_" (its identifier
# twin: "tier_1_escalations", "50__off_sale"), is asked too and no chunk carries it. A filter that maps
# categories to identifiers (partition or collection names, say) finds the category's chunks for it.
_TWINNED_KIND = 3
_SOURCE_TYPES = (None, "faq", "manual", "ticket", "runbook", "wiki page")
_DOC_IDS = (
    "kb/billing/refund-policy-{n}.md", "{uuid}", "FAQ {n}: Passwort zurücksetzen", "产品手册-{n:02d}",
    "page#{n}-intro", "JIRA-{n}", "docs/how to/reset {n}.txt", "Инструкция №{n}",
)  # fmt: skip
_OTHER_SCRIPTS = (
    "数据库", "备份", "恢复", "账户", "密码", "重置", "Почему", "сервер", "ответ", "Πώς", "δεδομένα",
    "كيف", "الحساب", "café", "naïve", "façade", "über", "🙂", "🚀", "—", "…", "«", "»", "!", ",", ";", ":",
    "(", ")", "&",
)  # fmt: skip
# Punctuation a query may hold is never a token of a text (a whitespace analyzer keeps it as one).
# Words that may stand in a query but in no text: other scripts from a separate pool, and ASCII with
# no pseudo-word shape (stop words, digits, upper case that analyzers lower into nothing we use).
_QUERY_NOISE = ("如何", "退款", "Как", "вернуть", "Τι", "ماذا", "🙃", "¿qué", "OR", "1=1", "the", "a", "to")
_BLANKS = ("", " ", "   ", "\t\n")  # the first is the text of questions asked by their vector alone
_PUNCTUATION = ("?!", "...", "¿¡", "-- //", '""')
_SHAPES = (
    "keyword", "keyword-noise", "repeated", "long", "quoted", "blank", "punctuation", "noise", "other-script",
)  # fmt: skip


@dataclass(frozen=True)
class KbQuery:
    """A question about the generated part: its vector, its text, and what it may be asked in."""

    name: str
    vector: tuple[float, ...]
    text: str
    shape: str  # keyword, keyword-noise, repeated, long, quoted, blank, punctuation, noise, other-script, tie
    hybrid: bool  # safe for hybrid mode (no near-ties in its dense order)
    min_k: int = 1  # a tie at ranks 1 and 2 needs k >= 3 to stay inside the answer


@dataclass(frozen=True)
class KnowledgeBase:
    """The generated part: its chunks, the categories it uses and ones it does not, and its questions."""

    seed: int
    chunks: tuple[CorpusChunk, ...]
    categories: tuple[str, ...]
    absent_categories: tuple[str, ...]
    queries: tuple[KbQuery, ...]
    keywords: tuple[str, ...]
    words: tuple[str, ...]  # every word of the texts, for L0 hints that match by contains
    identifier_twin: str | None = None  # absent: a category with its punctuation made "_"
    # The hostile catalogue's chunks (conformance/corpus/_hostile_part.py), and the question whose chunk
    # pairs lie every decade 1e-9..1e-3 apart.
    hostile: tuple[CorpusChunk, ...] = ()
    tie_question: tuple[float, ...] | None = None

    @property
    def max_k(self) -> int:
        return _MAX_K

    def filtered_on(self, facts: EngineFacts | None) -> KnowledgeBase:
        """This knowledge base as a run filters it on the engine ``facts`` describe: ``categories`` (the
        ones requests filter by) without those no filter literal can match there, a category holding a
        newline on Milvus Lite 2.5.1 (``docs/engines.md``). Their chunks stay, found unfiltered."""
        if facts is None or facts.newline_categories is not False:
            return self
        return replace(self, categories=tuple(c for c in self.categories if "\n" not in c))


def generate(seed: int, *, scenario_dim: int, scenario_vectors: Sequence[Sequence[float]]) -> KnowledgeBase:
    """The generated knowledge base of run ``seed`` (the same value for the same seed)."""
    rng = random.Random(seed)
    dim = scenario_dim + EXTRA_DIMS
    vocabulary = _pseudo_words(rng, 60)
    # Keywords in Latin and in Cyrillic letters: a query in another script is searched by BM25 too.
    keywords, plain = [*vocabulary[:5], *_pseudo_words(rng, 2, script=_KEYWORD_SCRIPT)], vocabulary[5:]
    categories = [rng.choice(kind) for kind in _CATEGORY_KINDS]
    twin = identifier_twin(categories[_TWINNED_KIND]) if _TWINNED_KIND is not None else None
    rng.shuffle(categories)
    docs = _documents(rng, categories)
    chunks: list[CorpusChunk] = []
    topics: dict[str, np.ndarray] = {}
    np_rng = np.random.default_rng(seed)
    # One document over several categories (and none): its chunks cycle through them, every run.
    several = (categories[0], categories[1], None)
    for doc_id, category, count in docs:
        topic = _unit(np_rng.normal(size=EXTRA_DIMS))
        topics[doc_id] = topic
        source = rng.choice(_SOURCE_TYPES)
        for index in range(count):
            j = len(chunks)
            part = _unit(topic + 0.45 * np_rng.normal(size=EXTRA_DIMS))
            chunks.append(
                CorpusChunk(
                    doc_id=doc_id,
                    chunk_index=index,
                    text="",  # filled below
                    vector=_vector(scenario_dim, j, part),
                    category=several[index % 3] if doc_id == SEVERAL_CATEGORIES_DOC else category,
                    source_type=source,
                )
            )
    chunks = _duplicate(chunks)
    chunks = _texts(rng, chunks, keywords, plain)
    # The hostile catalogue's values, every run (issue 51): after the texts, so no keyword lands there.
    leaning = lambda j, part: _vector(scenario_dim, j, part)  # noqa: E731
    hostile = hostile_chunks(len(chunks), leaning, np_rng, EXTRA_DIMS)
    tie_question, ties = tie_pairs(len(chunks) + len(hostile), leaning, np_rng, EXTRA_DIMS)
    hostile += ties
    chunks += hostile
    all_vectors = np.asarray([*(_pad(v, dim) for v in scenario_vectors), *(c.vector for c in chunks)])
    queries = _queries(rng, np_rng, chunks, keywords, all_vectors, scenario_count=len(scenario_vectors))
    words = sorted({w for c in chunks for w in c.text.split() if w.isalpha() and w.isascii()})
    return KnowledgeBase(
        seed=seed,
        chunks=tuple(chunks),
        categories=tuple(sorted({c.category for c in chunks if c.category is not None})),
        absent_categories=(*_ABSENT, *([twin] if twin else [])),
        identifier_twin=twin,
        hostile=tuple(hostile),
        tie_question=tie_question,
        queries=tuple(queries),
        keywords=tuple(keywords),
        words=tuple(words),
    )


def identifier_twin(category: str) -> str:
    """``category`` with every character but ASCII letters, digits and ``_`` replaced by ``_``."""
    return re.sub(r"[^A-Za-z0-9_]", "_", category)


def _duplicate(chunks: list[CorpusChunk]) -> list[CorpusChunk]:
    """Duplicate vectors in two documents (every run): every query sees them at exactly the same distance,
    whatever order the engine sums in; a query at that vector finds both at distance zero."""
    return [*chunks[:-1], chunks[-1].model_copy(update={"vector": chunks[0].vector})]


def _pseudo_words(rng: random.Random, n: int, *, script: str = "latin") -> list[str]:
    """Lowercase words no stemmer, stop list or case filter changes: consonant-vowel syllables, ending in
    ``a`` or ``o`` (no English suffix a stemmer strips ends that way); in Cyrillic, ending in ``к`` (no
    inflection ending of the languages written in it is a lone ``к``)."""
    if script == "cyrillic":
        consonants, vowels, endings = "бвгдзлмнпрст", "аоу", ("к",)
    else:
        consonants, vowels, endings = "bdfgklmnprtvz", "aio", ("a", "o")
    words: set[str] = set()
    while len(words) < n:
        syllables = [rng.choice(consonants) + rng.choice(vowels) for _ in range(rng.randint(2, 3))]
        words.add("".join(syllables) + rng.choice(consonants) + rng.choice(endings))
    # Shuffled from a sorted list: a set's order changes with the process's string hashes, and the
    # same seed must give the same words in every process.
    ordered = sorted(words)
    rng.shuffle(ordered)
    return ordered


def _documents(rng: random.Random, categories: Sequence[str]) -> list[tuple[str, str | None, int]]:
    """(docId, category, chunk count): many one- or two-chunk documents, a few of a dozen chunks."""
    docs: list[tuple[str, str | None, int]] = []
    used: set[str] = set()
    tiny = categories[-1]  # a category of one chunk: filtered searches return almost nothing
    docs.append((_doc_id(rng, used), tiny, _TINY_CHUNKS))
    # Ids that collide when docId and chunkIndex are concatenated (doc1/11 and doc11/1), every run.
    used.update(("doc1", _COLLIDING_DOC))
    docs.append(("doc1", categories[0], _MANY_CHUNKS))
    docs.append((_COLLIDING_DOC, categories[1], 2))
    for i in range(26):
        category: str | None = None if i == 0 or rng.random() < 0.1 else categories[i % (len(categories) - 1)]
        docs.append((_doc_id(rng, used), category, rng.choice(_SIZES)))
    return docs


def _doc_id(rng: random.Random, used: set[str]) -> str:
    while True:
        template = rng.choice(_DOC_IDS)
        uuid = "".join(rng.choice("0123456789abcdef") for _ in range(32))
        uuid = f"{uuid[:8]}-{uuid[8:12]}-{uuid[12:16]}-{uuid[16:20]}-{uuid[20:]}"
        doc_id = template.format(n=rng.randint(1, 999), uuid=uuid)
        if doc_id not in used:
            used.add(doc_id)
            return doc_id


def _vector(scenario_dim: int, j: int, part: np.ndarray) -> tuple[float, ...]:
    """A unit vector leaning away from every scenario question, ``part`` in the generated dimensions."""
    lean = _LEAN + 0.0004 * j  # distinct per chunk: no ties among them for a scenario question
    values = [0.0] * scenario_dim
    for axis in _SCENARIO_QUERY_AXES:
        values[axis] = -lean
    rest = math.sqrt(1.0 - len(_SCENARIO_QUERY_AXES) * lean * lean)
    return tuple(values + [float(x) for x in rest * part])


def _texts(
    rng: random.Random, chunks: list[CorpusChunk], keywords: Sequence[str], plain: Sequence[str]
) -> list[CorpusChunk]:
    """Texts: most chunks mix scripts, punctuation and emoji; the ones a keyword finds are ten plain words
    with distinct counts of it (1 to 4), so BM25 orders them the same way under any analyzer."""
    order = list(range(len(chunks)))
    rng.shuffle(order)
    texts: dict[int, str] = {}
    cursor = 0
    for keyword in keywords:
        matches = rng.randint(1, 4)
        for tf in range(matches, 0, -1):
            j = order[cursor]
            cursor += 1
            words = [keyword] * tf + rng.sample(list(plain), _TEXT_TOKENS - tf)
            rng.shuffle(words)
            texts[j] = " ".join(words)
    for j in range(len(chunks)):
        if j in texts:
            continue
        if rng.random() < 0.3:
            texts[j] = " ".join(rng.sample(list(plain), _TEXT_TOKENS))
            continue
        parts = [rng.choice(plain) if rng.random() < 0.5 else rng.choice(_OTHER_SCRIPTS) for _ in range(14)]
        texts[j] = _shorten(" ".join(parts), 240)
    return [c.model_copy(update={"text": texts[j]}) for j, c in enumerate(chunks)]


def _shorten(text: str, max_bytes: int) -> str:
    while len(text.encode()) > max_bytes:
        text = text.rsplit(" ", 1)[0]
    return unicodedata.normalize("NFC", text)


def _queries(
    rng: random.Random,
    np_rng: np.random.Generator,
    chunks: Sequence[CorpusChunk],
    keywords: Sequence[str],
    vectors: np.ndarray,
    *,
    scenario_count: int,
) -> list[KbQuery]:
    categories: list[str | None] = [None] * scenario_count + [c.category for c in chunks]
    out: list[KbQuery] = []
    attempts = 0
    while len(out) < 36 and attempts < 500:
        attempts += 1
        anchor = rng.randrange(len(chunks))
        noise = np.zeros(vectors.shape[1])
        noise[vectors.shape[1] - EXTRA_DIMS :] = np_rng.normal(size=EXTRA_DIMS)
        vector = _unit(np.asarray(chunks[anchor].vector) + rng.uniform(0.2, 0.9) * _unit(noise))
        if not _separated(vectors, vector, categories):
            continue
        shape = _SHAPES[len(out) % len(_SHAPES)]
        keyword = keywords[-1 - len(out) % 2] if shape == "other-script" else rng.choice(keywords)
        text = _text(rng, shape, keyword)
        out.append(
            KbQuery(f"kb{len(out)}-{shape}", tuple(float(x) for x in vector), text, shape, hybrid=True)
        )
    # First of the ties (the one the explicit searches ask): at the duplicated vector, both copies at
    # distance zero, an exact tie whatever the engine's float32 order.
    zero = _at_the_duplicate(chunks)
    tie = _BLANKS[0]
    out.append(KbQuery(f"kb{len(out)}-tie", tuple(float(x) for x in zero), tie, "tie", hybrid=False, min_k=3))
    ties = 0
    for _ in range(20):  # two chunks of different documents at exactly the same distance: dense mode only
        if ties == _NEAR_TIES:  # every run has two (features/spec/input-model.md: near ties)
            break
        a, b = rng.sample(range(len(chunks)), 2)
        if chunks[a].doc_id == chunks[b].doc_id:
            continue
        ties += 1
        vector = _unit(np.asarray(chunks[a].vector) + np.asarray(chunks[b].vector))
        name = f"kb{len(out)}-tie"
        out.append(KbQuery(name, tuple(float(x) for x in vector), tie, "tie", hybrid=False, min_k=3))
    return out


def _at_the_duplicate(chunks: Sequence[CorpusChunk]) -> np.ndarray:
    """The first tie's vector: the duplicated one (see :func:`_duplicate`), at distance zero from both."""
    return _unit(np.asarray(chunks[0].vector))


def _text(rng: random.Random, shape: str, keyword: str) -> str:
    noise = rng.sample(_QUERY_NOISE, 3)
    if shape in ("keyword", "other-script"):
        return keyword
    if shape == "keyword-noise":
        return f"{noise[0]} {keyword} ? {noise[1]}"  # punctuation apart: whitespace analyzers agree
    if shape == "repeated":
        return f"{keyword} {keyword}"
    if shape == "long":
        return " ".join(rng.choice(_QUERY_NOISE) for _ in range(40)) + f" {keyword}"
    if shape == "quoted":
        return f'" {keyword} " OR 1=1 \\ {noise[0]}'
    if shape == "blank":
        return rng.choice(_BLANKS)
    if shape == "punctuation":
        return rng.choice(_PUNCTUATION)
    return " ".join(noise)


def _separated(vectors: np.ndarray, query: np.ndarray, categories: Sequence[str | None]) -> bool:
    """No two of the nearest chunks (overall and in each category) closer in distance than ``_GAP``."""
    q = query.astype(np.float32)
    distances = ((vectors.astype(np.float32) - q) ** 2).sum(axis=1)
    order = np.argsort(distances)
    for group in {None, *categories}:
        ranked = [
            d for i, d in zip(order, distances[order], strict=True) if group is None or categories[i] == group
        ]
        head = ranked[: _MAX_K * 2 + 10]
        if any(b - a < _GAP for a, b in itertools.pairwise(head)):
            return False
    return True


def _unit(v: np.ndarray) -> np.ndarray:
    return v / np.linalg.norm(v)


def _pad(vector: Sequence[float], dim: int) -> list[float]:
    return [*vector, *([0.0] * (dim - len(vector)))]

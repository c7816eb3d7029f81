"""``rag-reference``: ingest chunks and look knowledge up from the shell. A thin layer over the library.

Examples::

    rag-reference ingest --sample
    rag-reference query "how do I reset my password" --category account
    rag-reference --uri http://localhost:19530 query "refund time" --mode dense --json
    rag-reference delete faq-7

The URI comes from ``--uri``, else ``MILVUS_URI``, else the Milvus Lite file ``./rag-reference.db``.
The token is read from ``MILVUS_TOKEN`` only, so it never shows up in shell history or ``ps``.
Texts and queries without vectors are embedded offline by ``--embedder``: ``auto`` (the default) is the
wordllama model when the ``embed`` extra is installed (256 dimensions) and otherwise the hashing
embedder (``--dim``, default 384; deterministic, but not a semantic model). Every command says on
stderr which one it uses. Ingest and query a collection with the same embedder.

``evaluate`` and ``calibrate`` run a labelled query set (the bundled one by default) on a throw-away
collection and write JSON, Markdown and PNG reports; see ``docs/evaluation.md``.

Ingesting a file replaces every document in it whole (all of a document's chunks belong in one file);
``delete`` removes one document. Stored text is printed with control characters escaped. See
``docs/deploying-the-reference.md``.

Exit codes: 0 success, 2 an error the message explains (bad input, unreachable engine), 130 interrupted.
"""

from __future__ import annotations

import argparse
import contextlib
import logging
import os
import sys
from collections.abc import Sequence
from typing import TextIO

from evaluation import EvaluationError, progress_bar

from ._embed import EMBEDDER_NAMES, Embedder, describe_embedder, make_embedder
from ._errors import InvalidSettingError, RetrievalQualityError
from ._lookup import LookupResult, lookup_knowledge
from ._settings import Settings
from .evaluation._cli import add_commands
from .store._ingest import read_jsonl, sample_path
from .store._store import MilvusKnowledgeStore, redact_uri

__all__ = ["main"]

DEFAULT_URI = "./rag-reference.db"
DEFAULT_COLLECTION = "rag_reference"
DEFAULT_DIM = 384  # of the hashing embedder; the wordllama model has 256


def main(argv: Sequence[str] | None = None) -> int:
    """Run the CLI; returns the exit code (the console script passes it to ``sys.exit``)."""
    args = _parser().parse_args(argv)
    # pymilvus configures its loggers when it is first imported, resetting any level set before: import
    # it now, so the levels set below hold for the whole command.
    with contextlib.suppress(ImportError):
        import pymilvus  # noqa: F401
    # pymilvus logs every failed RPC with a traceback at ERROR level; the CLI reports errors itself.
    # Embedded Milvus Lite logs its start and stop at INFO (faiss, milvus_lite), and its gRPC server
    # logs a traceback for every RPC it does not implement (AllocTimestamp, asked by pymilvus): noise
    # that buries the command's own output and progress bar.
    quiet = {"pymilvus": logging.CRITICAL, "grpc._server": logging.CRITICAL}
    levels = {name: logging.getLogger(name).level for name in quiet}
    for name, level in quiet.items():
        logging.getLogger(name).setLevel(level)
    # Not restored: Lite logs its server stop when the interpreter exits, after main() has returned.
    logging.getLogger("faiss").setLevel(max(logging.WARNING, logging.getLogger("faiss").level))
    # Milvus Lite serves a .db file from inside this process and logs a traceback for every request it
    # fails (five for one ingest on a full disk); the command says what failed in one line.
    logging.getLogger("milvus_lite").setLevel(logging.CRITICAL)
    try:
        code: int = args.run(args)
        return code
    except (RetrievalQualityError, EvaluationError) as exc:
        print(f"rag-reference: error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("rag-reference: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        # `rag-reference query ... | head`: the reader left; stop quietly, as Unix tools do.
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return 141
    finally:
        for name, level in levels.items():
            logging.getLogger(name).setLevel(level)


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="rag-reference",
        description="Reference knowledge store for the rag-retrieval-quality-score spec, on Milvus.",
    )
    parser.add_argument(
        "--uri", help=f"Milvus URI or Milvus Lite file (env MILVUS_URI, default {DEFAULT_URI})"
    )
    parser.add_argument("--collection", default=DEFAULT_COLLECTION, help="collection name (%(default)s)")
    parser.add_argument(
        "--embedder",
        choices=EMBEDDER_NAMES,
        default="auto",
        help="auto: wordllama when installed and --dim is unset or 256, else hashing (%(default)s)",
    )
    parser.add_argument(
        "--dim",
        type=_dimension,
        help=f"dense vector dimension: 256 for wordllama, any for hashing (default {DEFAULT_DIM})",
    )
    parser.add_argument(
        "--index-type",
        choices=("FLAT", "HNSW"),
        default="FLAT",
        help="dense index when creating (%(default)s)",
    )
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    ingest = commands.add_parser("ingest", help="replace the documents of a JSON Lines file, whole")
    source = ingest.add_mutually_exclusive_group(required=True)
    source.add_argument("file", nargs="?", help="one chunk per line: docId, chunkIndex, text[, vector, ...]")
    source.add_argument("--sample", action="store_true", help="ingest the bundled 32-chunk sample")
    ingest.add_argument("--batch-size", type=int, default=256, help="chunks per write (%(default)s)")
    ingest.add_argument("--no-progress", action="store_true", help="no progress bar on stderr")
    ingest.set_defaults(run=_ingest)

    query = commands.add_parser("query", help="look knowledge up and print the evidence")
    query.add_argument("text", help="the query text")
    query.add_argument("--mode", choices=("dense", "hybrid"), help="default: retrieval.search.mode")
    query.add_argument("--category", help="filter by category; a low-quality result retries unfiltered")
    query.add_argument("--settings", help="settings file (.toml, .yaml, .json); env overrides apply")
    query.add_argument("--json", action="store_true", help="print the LookupResult as JSON")
    query.set_defaults(run=_query)

    delete = commands.add_parser("delete", help="remove every chunk of one document")
    delete.add_argument("doc_id", metavar="DOC_ID", help="the document's docId")
    delete.set_defaults(run=_delete)

    drop = commands.add_parser("drop", help="drop the collection")
    drop.set_defaults(run=_drop)
    add_commands(commands, _settings)
    return parser


def _dimension(value: str) -> int:
    try:
        dim = int(value)
    except ValueError:
        dim = 0
    if dim < 2:
        raise argparse.ArgumentTypeError(f"{value!r} is not a vector dimension; use an integer of at least 2")
    return dim


def _settings(path: str | None) -> Settings:
    try:
        return Settings.load(path)
    except RetrievalQualityError:
        raise
    except Exception as exc:  # OSError, or the TOML/YAML/JSON parser's own error type
        raise InvalidSettingError(str(path), f"cannot read the settings file: {exc}") from None


def _uri(args: argparse.Namespace) -> str:
    return args.uri or os.environ.get("MILVUS_URI") or DEFAULT_URI


def _embedder(args: argparse.Namespace) -> Embedder:
    embedder = make_embedder(args.embedder, dim=args.dim)
    print(f"rag-reference: embedder: {describe_embedder(embedder)}", file=sys.stderr, flush=True)
    return embedder


def _connect(args: argparse.Namespace, dim: int, settings: Settings | None = None) -> MilvusKnowledgeStore:
    return MilvusKnowledgeStore.connect(
        _uri(args),
        collection=args.collection,
        dim=dim,
        token=os.environ.get("MILVUS_TOKEN") or None,
        settings=settings,
        index_type=args.index_type,
    )


def _ingest(args: argparse.Namespace) -> int:
    path = sample_path() if args.sample else args.file
    embedder = _embedder(args)
    chunks = read_jsonl(path, dim=embedder.dim)
    with _connect(args, embedder.dim) as store:
        # The file is streamed, so the bar counts chunks without a total; off when stderr is no terminal.
        with progress_bar("ingest", enabled=not args.no_progress, unit="chunk") as bar:

            def progress(done: int) -> None:
                bar.update(done - bar.n)

            total = store.ingest(chunks, batch_size=args.batch_size, embedder=embedder, progress=progress)
        count = store.count()
    print(
        f"ingested {total} chunks from {path} into {args.collection!r} at {redact_uri(_uri(args))}; "
        f"the collection holds {count}"
    )
    return 0


def _query(args: argparse.Namespace) -> int:
    settings = _settings(args.settings)
    embedder = _embedder(args)
    vector = embedder.embed([args.text])[0]
    with _connect(args, embedder.dim, settings) as store:
        result = lookup_knowledge(
            store, args.text, vector, settings=settings, category=args.category, mode=args.mode
        )
    if args.json:
        print(result.model_dump_json(by_alias=True, indent=2))
    else:
        _print_result(result, query=args.text, mode=args.mode or settings.search_mode, out=sys.stdout)
    return 0


def _delete(args: argparse.Namespace) -> int:
    # Deleting reads no vectors either: no model is loaded for it.
    with _connect(args, args.dim or DEFAULT_DIM) as store:
        removed = store.delete_document(args.doc_id)
    where = f"{args.collection!r} at {redact_uri(_uri(args))}"
    if removed:
        print(f"deleted document {shown(args.doc_id)} ({removed} chunks) from {where}")
    else:
        print(f"no document {shown(args.doc_id)} in {where}; nothing deleted")
    return 0


def _drop(args: argparse.Namespace) -> int:
    # Dropping reads no vectors: the dimension is irrelevant, so no model is loaded for it.
    with _connect(args, args.dim or DEFAULT_DIM) as store:
        store.drop()
    print(f"dropped {args.collection!r} at {redact_uri(_uri(args))}")
    return 0


def _print_result(result: LookupResult, *, query: str, mode: str, out: TextIO) -> None:
    res = result.result
    retry = "yes, the category-filtered result was low quality" if result.retried else "no"
    top = "-" if res.top_quality_score is None else f"{res.top_quality_score:.3f}"
    print(f"query: {shown(query)}  mode: {mode}  path: {result.path}  retry ran: {retry}", file=out)
    print(
        f"relevance: {res.relevance_level.value}  top qualityScore: {top}  "
        f"low quality: {'yes' if res.is_low_quality else 'no'}  completeness: {res.completeness.value}",
        file=out,
    )
    if result.filtered_result is not None:
        first = result.filtered_result
        first_top = "-" if first.top_quality_score is None else f"{first.top_quality_score:.3f}"
        print(f"filtered attempt: {len(first.blocks)} blocks, top qualityScore {first_top}", file=out)
    if not res.blocks:
        print("no evidence", file=out)
        return
    header = (
        f"{'originalRank':>12}  {'evidence':<28} {'scoreLabel':<10} {'score':>10} "
        f"{'denseDistance':>13} {'qualityScore':>12}  hitReasons"
    )
    print(header, file=out)
    for block in res.blocks:
        dense = "-" if block.dense_distance is None else f"{block.dense_distance:.4f}"
        score = "-" if block.score is None else f"{block.score:.6f}"
        print(
            f"{block.original_rank:>12}  {shown(block.evidence_key, quote=False):<28} "
            f"{shown(block.score_label, quote=False):<10} {score:>10} "
            f"{dense:>13} {block.quality_score:>12.3f}  {', '.join(block.hit_reasons)}",
            file=out,
        )
        excerpt = block.excerpt if len(block.excerpt) <= 100 else block.excerpt[:97] + "..."
        print(f"{'':>14}{shown(excerpt, quote=False)}", file=out)


def shown(text: str, *, quote: bool = True) -> str:
    """``text`` safe for a terminal: control characters (escape sequences, carriage returns, C1 codes,
    bidirectional overrides) and lone surrogates written as Python escapes, the rest as it is."""
    safe = "".join(ch if ch.isprintable() else ascii(ch)[1:-1] for ch in text)
    return f"'{safe}'" if quote else safe


if __name__ == "__main__":
    sys.exit(main())

"""``rag-reference evaluate`` and ``rag-reference calibrate``: thin layers over the evaluation library.

Both run on a throw-away collection: in a temporary Milvus Lite file by default, or under a unique
name at ``--uri`` / ``MILVUS_URI`` (dropped at the end, also on failure). Progress goes to stderr;
stdout gets a short summary and the paths of the files written.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from importlib import metadata
from pathlib import Path
from typing import Any

import evaluation as _shared
from evaluation import ProgressStep, plotting_available, slice_set

from .._embed import describe_embedder, make_embedder
from .._settings import Settings
from ..store._store import MilvusKnowledgeStore, redact_uri
from ._calibration import DEFAULT_MAX_L2, Calibration, calibrate
from ._dataset import CHUNKINGS, EvalSet, EvaluationError, load_beir_set, load_eval_set
from ._report import calibration_markdown, evaluation_markdown, toml_float
from ._run import DEFAULT_CHECK_DEPTH, DEFAULT_KS, EvalRun, load_run, run_evaluation
from ._summary import summarize
from ._trec import export_trec

__all__ = ["add_commands"]

DEFAULT_OUT = "rag-evaluation"


def add_commands(commands: Any, settings_loader: Any) -> None:
    """Register ``evaluate`` and ``calibrate`` on the CLI's subparsers."""
    evaluate = commands.add_parser(
        "evaluate",
        help="run a labelled query set in dense and hybrid mode; write evaluation.json, .md and TREC runs",
        description="Ingest a labelled corpus into a throw-away collection, run every query through "
        "lookup_knowledge in each mode, and report R@k, nDCG@k and RR (trec_eval's), the category "
        "retry and the low-quality gate as a classifier.",
    )
    _run_options(evaluate)
    evaluate.set_defaults(run=lambda args: _evaluate(args, settings_loader))

    cal = commands.add_parser(
        "calibrate",
        help="suggest thresholds from an evaluation; write calibration.json, .md and PNG plots",
        description="Distributions of the top qualityScore for answerable and unanswerable queries per "
        "mode and rag.max-l2-distance, a threshold sweep, and suggested settings. Reads --run, or runs "
        "the evaluation first (same options as evaluate).",
    )
    _run_options(cal)
    cal.add_argument("--run", dest="run_file", help="an evaluation.json to calibrate instead of evaluating")
    cal.add_argument(
        "--max-l2",
        type=_floats,
        default=DEFAULT_MAX_L2,
        help="rag.max-l2-distance values to compare, comma separated; the configured one is added "
        "(default 1,1.5,2,3,4)",
    )
    cal.add_argument("--no-plots", action="store_true", help="write no PNG (no matplotlib needed)")
    cal.set_defaults(run=lambda args: _calibrate(args, settings_loader))


def _run_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--corpus", help="corpus JSON Lines (default: the bundled set)")
    parser.add_argument("--queries", help="labelled queries JSON Lines (default: the bundled set)")
    parser.add_argument(
        "--beir", metavar="DIR", help="a BEIR-layout dataset instead: corpus.jsonl, queries.jsonl, qrels/"
    )
    parser.add_argument("--split", help="the BEIR qrels split to evaluate, qrels/SPLIT.tsv (test)")
    parser.add_argument(
        "--beir-chunks",
        choices=CHUNKINGS,
        default="auto",
        help="keyed: every _id is docId#chunkIndex; document: one chunk per document; auto: keyed when "
        "every _id is a key (%(default)s)",
    )
    parser.add_argument("--limit", type=_positive, help="only N queries, taken in turn from each kind")
    parser.add_argument("--modes", type=_modes, default=("dense", "hybrid"), help="dense,hybrid (both)")
    parser.add_argument(
        "--k", dest="ks", type=_ints, default=DEFAULT_KS, help="cut-offs of R@k and nDCG@k (1,5,10)"
    )
    parser.add_argument(
        "--check-depth",
        type=_positive,
        default=DEFAULT_CHECK_DEPTH,
        help="top-k of the label check, dense against BM25 (%(default)s)",
    )
    parser.add_argument("--settings", help="settings file (.toml, .yaml, .json); env overrides apply")
    parser.add_argument("--out", default=DEFAULT_OUT, help="directory for the reports (%(default)s)")
    parser.add_argument("--no-progress", action="store_true", help="no progress bar on stderr")


def _positive(value: str) -> int:
    try:
        number = int(value)
    except ValueError:
        number = 0
    if number < 1:
        raise argparse.ArgumentTypeError(f"{value!r} is not a whole number of at least 1")
    return number


def _ints(value: str) -> tuple[int, ...]:
    return tuple(_positive(part.strip()) for part in value.split(",") if part.strip()) or (_positive(""),)


def _floats(value: str) -> tuple[float, ...]:
    try:
        numbers = tuple(float(part) for part in value.split(",") if part.strip())
    except ValueError:
        raise argparse.ArgumentTypeError(f"{value!r} is not a comma-separated list of numbers") from None
    if not numbers or any(not n > 0 for n in numbers):
        raise argparse.ArgumentTypeError(f"{value!r}: every rag.max-l2-distance must be above 0")
    return numbers


def _modes(value: str) -> tuple[str, ...]:
    modes = tuple(dict.fromkeys(part.strip() for part in value.split(",") if part.strip()))
    if not modes or any(m not in ("dense", "hybrid") for m in modes):
        raise argparse.ArgumentTypeError(f"{value!r}: use dense, hybrid or dense,hybrid")
    return modes


def _say(message: str) -> None:
    print(f"rag-reference: {message}", file=sys.stderr, flush=True)


@contextmanager
def _throwaway_store(args: argparse.Namespace, dim: int, settings: Settings) -> Iterator[tuple[Any, str]]:
    """A store on a fresh collection, dropped afterwards; a temporary Lite file unless a URI was given."""
    uri = args.uri or os.environ.get("MILVUS_URI")
    collection = f"rag_eval_{uuid.uuid4().hex[:12]}"
    with tempfile.TemporaryDirectory(prefix="rag-eval-") as tmp:
        if uri:
            engine = redact_uri(uri)
        else:
            uri = str(Path(tmp) / "evaluation.db")
            engine = f"Milvus Lite {_lite_version()} (temporary file)"
        store = MilvusKnowledgeStore.connect(
            uri,
            collection=collection,
            dim=dim,
            token=os.environ.get("MILVUS_TOKEN") or None,
            settings=settings,
            index_type=args.index_type,
        )
        try:
            yield store, engine
        finally:
            try:
                store.drop()
            finally:
                store.close()


def _lite_version() -> str:
    try:
        return metadata.version("milvus-lite")
    except metadata.PackageNotFoundError:
        return "(version unknown)"


def _evaluate_run(args: argparse.Namespace, settings_loader: Any, *, calibrating: bool = False) -> EvalRun:
    _shared.require_statistics("rag-reference calibrate" if calibrating else "rag-reference evaluate")
    eval_set = _load_set(args)  # bad input (an id a TREC file cannot carry too) fails before any engine
    if args.limit is not None:
        eval_set = slice_set(eval_set, args.limit)
    if calibrating and all(q.relevant for q in eval_set.queries):
        # Calibration needs both classes; found here, not after the whole evaluation has run.
        raise EvaluationError(
            f"calibration needs answerable and unanswerable queries; this set has {len(eval_set.queries)} "
            "answerable and no unanswerable ones: add queries of kind unanswerable"
            + (" (or raise --limit)" if args.limit is not None else "")
        )
    for warning in eval_set.warnings:
        _say(f"warning: {warning}")
    settings: Settings = settings_loader(args.settings)
    embedder = make_embedder(args.embedder, dim=args.dim)
    _say(f"embedder: {describe_embedder(embedder)}")
    with _throwaway_store(args, embedder.dim, settings) as (store, engine):
        _say(
            f"engine: {engine}; ingesting {len(eval_set.corpus)} chunks, then {len(eval_set.queries)} queries"
        )
        show = not args.no_progress
        with (
            ProgressStep("ingest", enabled=show, unit="chunk") as chunks,
            ProgressStep("evaluate", enabled=show, unit="query") as queries,
        ):
            return run_evaluation(
                eval_set,
                store,
                embedder,
                settings=settings,
                modes=args.modes,
                ks=args.ks,
                label_check_depth=args.check_depth,
                engine=engine,
                progress=queries,
                ingest_progress=chunks,
            )


def _load_set(args: argparse.Namespace) -> EvalSet:
    if args.beir is None:
        if args.split is not None or args.beir_chunks != "auto":
            raise EvaluationError("--split and --beir-chunks apply to a BEIR dataset; add --beir DIR")
        return load_eval_set(args.corpus, args.queries)
    if args.corpus is not None or args.queries is not None:
        raise EvaluationError(
            "--beir reads the corpus and queries from its folder; leave out --corpus and --queries"
        )
    eval_set = load_beir_set(args.beir, split=args.split or "test", chunks=args.beir_chunks)
    _say(f"set: {eval_set.layout} ({len(eval_set.corpus)} chunks, {len(eval_set.queries)} queries)")
    return eval_set


def _write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")


def _write_evaluation(run: EvalRun, out: Path) -> list[Path]:
    summary = summarize(run)
    data = {"run": run.model_dump(mode="json"), "summary": summary.model_dump(mode="json")}
    # Compact: the Markdown is for people; a run of the bundled set is 0.8 MB indented.
    _write(out / "evaluation.json", json.dumps(data, separators=(",", ":")) + "\n")
    _write(out / "evaluation.md", evaluation_markdown(run, summary))
    trec = export_trec(run, out)
    gates = {g.mode: g for g in summary.gates}
    for row in summary.ranking:
        if row.group == "all":
            g = gates[row.mode].scores
            print(
                f"{row.mode:>6}: RR {row.metrics['RR']:.3f}, "
                + ", ".join(f"R@{k} {row.metrics[f'R@{k}']:.3f}" for k in run.ks)
                + f"; gate at {gates[row.mode].threshold:.2f}: F1 {_fmt(g.f1)}, J {_fmt(g.youden_j)}"
            )
    return [out / "evaluation.json", out / "evaluation.md", *trec]


def _fmt(value: float | None) -> str:
    return "-" if value is None else f"{value:.3f}"


def _evaluate(args: argparse.Namespace, settings_loader: Any) -> int:
    run = _evaluate_run(args, settings_loader)
    written = _write_evaluation(run, Path(args.out))
    print(f"wrote {', '.join(str(p) for p in written)}")
    return 0


def _calibrate(args: argparse.Namespace, settings_loader: Any) -> int:
    out = Path(args.out)
    written: list[Path] = []
    if not args.no_plots:
        _check_plotting()  # before a minute of evaluation, not after
    if args.run_file:
        run = load_run(args.run_file)
    else:
        run = _evaluate_run(args, settings_loader, calibrating=True)
        written += _write_evaluation(run, out)
    with ProgressStep("calibrate", enabled=not args.no_progress, unit="case") as step:
        result = calibrate(run, max_l2_distances=args.max_l2, progress=step)
    images: dict[str, str] = {}
    if not args.no_plots:
        from ._plots import PLOT_FILES, write_plots

        images = write_plots(result, out)
        written += [out / name for name in PLOT_FILES.values()]
    _write(out / "calibration.json", json.dumps(result.model_dump(mode="json"), separators=(",", ":")) + "\n")
    _write(out / "calibration.md", calibration_markdown(result, images))
    written += [out / "calibration.json", out / "calibration.md"]
    _print_suggestions(result)
    print(f"wrote {', '.join(str(p) for p in written)}")
    return 0


def _check_plotting() -> None:
    from ._plots import PlottingUnavailableError

    if not plotting_available():
        raise PlottingUnavailableError(
            "matplotlib is not installed; install the plot extra (pip install "
            "'rag-quality-conformance[plot]') or pass --no-plots"
        )


def _print_suggestions(result: Calibration) -> None:
    for s in result.suggestions:
        if not s.settings:
            print(f"{s.variant}: no suggestion ({s.note})")
            continue
        assert s.best is not None
        keys = ", ".join(f"{k} = {toml_float(v)}" for k, v in s.settings.items())
        print(f"{s.variant}: {keys}  (J {_fmt(s.best.scores.youden_j)}, F1 {_fmt(s.best.scores.f1)})")

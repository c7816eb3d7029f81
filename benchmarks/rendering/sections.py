"""The Markdown sections of ``RESULTS.md``, one function per figure. Pure formatting."""

from __future__ import annotations

from typing import Any

__all__ = [
    "client_time",
    "conformance",
    "ingest",
    "method",
    "ms",
    "post_process",
    "profiles",
    "retrieval",
    "side_by_side",
    "stages",
    "stdio",
    "table",
]

from benchmarks._targets import PIPELINE_TARGET, lookup_target


def _lookup_target(r: dict[str, Any]) -> str:
    target = lookup_target(r["engine"], r["size"])
    return "-" if target is None else f"<= {target:g}"


METHOD = """\
## Method

- Corpus: {sizes} chunks of 40 to 120 words, Zipf-distributed over a generated 30,000-word
  vocabulary whose top ranks are English function words; 384-dim unit vectors from seeded word
  vectors (seed {seed}); 4 chunks per document, 8 categories. No model download.
- Queries: {queries} measured + {warmup} warm-up per size (not counted: they absorb connection
  set-up and the engine's slow first BM25 query after load); 2 to 6 salient words of a random chunk
  plus noise; no category (one engine search per lookup); L0 hints feed the legacy boosts.
- The variants run on the same collection, client and k, interleaved query by query, the order
  rotated per query. `client CPU` is this process's CPU time per query (all threads); `engine CPU`
  is the Milvus process's, read from /proc around each call (10 ms ticks: meaningful as a mean).
- Cores: {pinning}
- `lookup` is `reference.lookup_knowledge` in hybrid mode. `bare_hybrid_same_fields` sends the same
  `hybrid_search` (sub-requests, RRF k, limit, output fields with the dense vector) and leaves the
  result untouched; `bare_hybrid_ids_only` asks for ids only. `legacy_*` is `LegacyPipeline` from
  `benchmarks/subjects/legacy.py` (hybrid, dense probe, L2 backfill, keyword boosts, re-sort). The
  miniature runs the probe after the hybrid search; the design note calls it parallel, so both are
  timed (`benchmarks/figures/retrieval/legacy.py` starts the probe on a thread, nothing else changes).
- Engines: `lite` is Milvus Lite 3.x of this venv (a pure-Python engine); `lite-2.5.1` is Milvus
  Lite 2.5.1, the C++ core (segcore/knowhere) closest to a production server that runs here,
  reached directly on its own gRPC port (no forwarder in between). Each size runs on every engine
  before the next size.
- Profiles: cProfile of the client process for `lookup` and the bare call on every run (and for any
  other variant whose target is missed), below.
"""


def table(header: list[str], rows: list[list[Any]]) -> str:
    """A GitHub Markdown table."""
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(str(cell) for cell in row) + " |" for row in rows]
    return "\n".join(lines)


def ms(value: float) -> str:
    return f"{value:,.1f}" if value >= 10 else f"{value:.2f}"


def _queries(config: dict[str, Any]) -> str:
    """``200``, or ``200 (lite: 40)`` when some engine was given its own count."""
    own = ", ".join(f"{engine}: {n}" for engine, n in config.get("engine_queries") or ())
    return f"{config['queries']} ({own})" if own else str(config["queries"])


def method(config: dict[str, Any]) -> list[str]:
    """How the figures were measured."""
    sizes = ", ".join(f"{s:,}" for s in config["sizes"])
    pinning = (
        "while queries are timed, this process runs on the first core and the engine on the others "
        "(`benchmarks/instruments/affinity.py`), as beside a remote server; left to the scheduler on a small "
        "machine, the client's work after each reply shares a core with the engine's threads."
        if config.get("pin", False)
        else "not pinned (`--no-pin`, or a run before pinning existed): the scheduler placed the client "
        "and the engine."
    )
    text = METHOD.format(
        sizes=sizes, seed=config["seed"], queries=_queries(config), warmup=config["warmup"], pinning=pinning
    )
    return [text]


def _ratio(label: str, r: dict[str, Any], target: str) -> list[Any]:
    return [label, r["p50"], r["p95"], r["paired_median"], target]


def _old(r: dict[str, Any], key: str) -> str:
    old = r.get("old_lookup")
    return "-" if old is None else f"{old[key]['p50']:.3f}x"


def side_by_side(runs: list[dict[str, Any]]) -> list[str]:
    """The engines next to each other, one column per (engine, size): the figures the targets read."""
    heads = [f"{r['engine']} {r['size']:,}" for r in runs]

    def cell(r: dict[str, Any], get: Any) -> str:
        return "not run" if "not_run" in r else get(r)

    def cpu(name: str) -> Any:
        return lambda r: ms(r["latency_ms"][name]["client_cpu_per_call"])

    rows = [
        ["engine version", *(cell(r, lambda r: r["engine_version"]) for r in runs)],
        ["dense index", *(cell(r, lambda r: r["index"]) for r in runs)],
        ["`lookup` p50 ms", *(cell(r, lambda r: ms(r["latency_ms"]["lookup"]["p50"])) for r in runs)],
        [
            "bare `hybrid_search` (same fields) p50 ms",
            *(cell(r, lambda r: ms(r["latency_ms"]["bare_hybrid_same_fields"]["p50"])) for r in runs),
        ],
        [
            "**lookup / bare p50**",
            *(cell(r, lambda r: f"**{r['lookup_vs_bare']['p50']:.3f}x**") for r in runs),
        ],
        ["lookup / bare target", *(cell(r, _lookup_target) for r in runs)],
        [
            "old lookup (tuned hot path) / bare p50",
            *(cell(r, lambda r: _old(r, "vs_bare")) for r in runs),
        ],
        [
            "lookup / old lookup p50: the readability cost",
            *(cell(r, lambda r: _old(r, "new_vs_old")) for r in runs),
        ],
        [
            "lookup / bare, median of per-query ratios",
            *(cell(r, lambda r: f"{r['lookup_vs_bare']['paired_median']:.3f}x") for r in runs),
        ],
        ["client CPU per `lookup`, ms", *(cell(r, cpu("lookup")) for r in runs)],
        ["client CPU per bare call, ms", *(cell(r, cpu("bare_hybrid_same_fields")) for r in runs)],
        [
            "engine CPU per `lookup`, ms",
            *(cell(r, lambda r: ms(r["latency_ms"]["lookup"]["engine_cpu_per_call"])) for r in runs),
        ],
        [
            f"reference / legacy p50 (target <= {PIPELINE_TARGET} at 100k)",
            *(cell(r, lambda r: f"{r['reference_vs_legacy']['p50']:.3f}x") for r in runs),
        ],
    ]
    notes = [f"- {r['engine']} {r['size']:,}: not run: {r['not_run']}" for r in runs if "not_run" in r]
    notes += [
        f"- {r['engine']} {r['size']:,}: {r['index']} index: {r['index_note']}"
        for r in runs
        if r.get("index_note")
    ]
    notes += [
        f"- {r['engine']} {r['size']:,}: cores not separated: {r['affinity']['why']}"
        for r in runs
        if "not_run" not in r and not r.get("affinity", {}).get("pinned", True)
    ]
    return [
        "## Engines side by side",
        "",
        table(["figure", *heads], rows),
        "",
        *notes,
        *([""] if notes else []),
    ]


def stages(runs: list[dict[str, Any]]) -> list[str]:
    """A lookup's stages timed without a profiler: after the engine's reply, and the same replies warm."""
    measured = [r for r in runs if r.get("stages")]
    if not measured:
        return []
    labels = list(dict.fromkeys(label for r in measured for where in ("engine", "warm")
                                for label in r["stages"]["us"][where]))  # fmt: skip

    def cell(r: dict[str, Any], label: str) -> str:
        engine, warm = r["stages"]["us"]["engine"].get(label), r["stages"]["us"]["warm"].get(label)
        return "-" if engine is None or warm is None else f"{engine:,.0f} / {warm:,.0f}"

    heads = [f"{r['engine']} {r['size']:,} ({r['stages']['queries']} queries)" for r in measured]
    rows = [[label, *(cell(r, label) for r in measured)] for label in labels]
    work = "client work (all but the pymilvus call)"
    slower = [
        f"{r['engine']} {r['size']:,} {us['engine'][work] / us['warm'][work]:.1f}x"
        for r in measured
        if (us := r["stages"]["us"])["warm"].get(work)
    ]
    return [
        "## A lookup's stages, timed",
        "",
        "Median microseconds per `lookup` for each stage of the reference "
        "(`benchmarks/figures/retrieval/stages.py`: two "
        "clock reads around the function that does it, no profiler), on the profiled queries: first as "
        "measured, right after the engine's reply, then `/` the same replies replayed from memory, "
        f"{measured[0]['stages']['replays']} passes, nothing else in between (the same work, warm). "
        "The pymilvus row is the whole `hybrid_search` call, the engine's time included (replayed: "
        "none of it). A bare call has its own request building and pymilvus reading, so the client "
        "work it lacks is about the stages and the rest below it. Right after the reply the same work "
        "takes longer (" + ", ".join(slower) + "), as if its code and data had left the caches: "
        "between one lookup and the next this core runs gRPC and pymilvus, and the engine on the "
        "other core shares the one L3 cache. The engine's memory traffic alone does not explain it "
        "(it scans ten times more at 100,000 chunks), and how much of it a server on another "
        "machine would spare is not measured here.",
        "",
        table(["stage", *heads], rows),
        "",
    ]


def client_time(runs: list[dict[str, Any]]) -> list[str]:
    """Where a lookup's own client time goes, per engine and size, from the profile of the run."""
    measured = [r for r in runs if "client_time" in r]
    if not measured:
        return []
    parts = list(measured[0]["client_time"]["ms_per_call"])
    rows = [
        [
            part,
            *(
                f"{r['client_time']['ms_per_call'][part]:.3f} ({r['client_time']['share'][part]:.0%})"
                for r in measured
            ),
        ]
        for part in parts
    ]
    heads = [f"{r['engine']} {r['size']:,} ({r['client_time']['calls']} queries)" for r in measured]
    return [
        "## Where a lookup's client time goes",
        "",
        "Own time per `lookup` under cProfile, by who spends it, in ms (share of the profiled time), "
        "over the measured queries profiled per run (in each column's head). cProfile slows Python "
        "code more than waiting, so the Python parts are overstated; the order is what counts. The "
        "bare call's profile, beside it below, has the same pymilvus and gRPC parts.",
        "",
        table(["part", *heads], rows),
        "",
    ]


def retrieval(runs: list[dict[str, Any]]) -> list[str]:
    """Figures 1 and 2: latency per variant, the ratios, and how often the evidence differs."""
    out = ["## 1, 2. Query latency (ms per query, client wall time)", ""]
    for r in runs:
        if "not_run" in r:
            out += [f"### {r['engine']}, {r['size']:,} chunks: not run", "", r["not_run"], ""]
            continue
        out += [
            f"### {r['engine']} ({r['engine_version']}), {r['size']:,} chunks, {r['index']}, k = {r['k']}"
        ]
        rows = [
            [
                f"`{name}`",
                *(ms(s[key]) for key in ("p50", "p95", "mean", "client_cpu_per_call", "engine_cpu_per_call")),
            ]
            for name, s in r["latency_ms"].items()
        ]
        out += [
            "",
            table(["variant", "p50", "p95", "mean", "client CPU/query", "engine CPU/query"], rows),
            "",
        ]
        lb, rl = r["lookup_vs_bare"], r["reference_vs_legacy"]
        ratios = [
            _ratio("lookup / bare (same output fields)", lb, _lookup_target(r)),
            _ratio("lookup / bare (ids only)", lb["vs_ids_only"], "-"),
            *(
                [
                    _ratio("old lookup / bare (same output fields)", r["old_lookup"]["vs_bare"], "-"),
                    _ratio("lookup / old lookup", r["old_lookup"]["new_vs_old"], "-"),
                ]
                if "old_lookup" in r
                else []
            ),
            _ratio("reference / legacy (parallel probe)", rl, f"<= {PIPELINE_TARGET} at 100k"),
            _ratio("reference / legacy (sequential probe)", rl["vs_sequential_probe"], "-"),
        ]
        out += [table(["ratio", "p50", "p95", "median of per-query ratios", "target"], ratios), ""]
        diff = ", ".join(f"{k.replace('_', ' ')} **{v:.1%}**" for k, v in r["evidence_diff"].items())
        out += [f"Reference vs legacy (parallel probe) evidence, share of measured queries: {diff}.", ""]
    return out


def post_process(pp: dict[str, Any]) -> list[str]:
    """Figure 3, the new post_process beside the old (tuned) one."""
    targets = pp.get("targets_us", {})
    old = pp.get("old", {})
    old_us, new_vs_old = old.get("us_per_call", {}), old.get("new_vs_old", {})
    rows = [
        [
            n,
            f"{us:,.1f}",
            f"{old_us[n]:,.1f}" if n in old_us else "-",
            f"{new_vs_old[n]:.2f}x" if n in new_vs_old else "-",
            pp["us_per_candidate"][n],
            pp["growth_vs_100"].get(n, "-"),
            targets.get(n, "-"),
        ]
        for n, us in pp["us_per_call"].items()
    ]
    header = [
        "candidates",
        "us per call",
        f"old (git {old.get('commit', '?')}) us per call",
        "new / old",
        "us per candidate",
        "x the 100-candidate time",
        "target us",
    ]
    return [
        "## 3. post_process (hybrid candidates with denseDistance, return-n 5, cap 2 per document)",
        "",
        table(header, rows),
        "",
        "Median of 5 timed loops per size (`timeit`), one process, no engine; the new and the old version "
        "(`benchmarks/figures/old_reference/`, the tuned code before issue 25 made it read as the spec) "
        "alternate loop by loop. `new / old` is what readability costs.",
        "",
    ]


def conformance(conf: dict[str, Any]) -> list[str]:
    """Figure 4."""
    total = conf["instrumented_wall_s"]
    rows = [[k, v, f"{v / total:.0%}"] for k, v in conf["breakdown_s"].items()]
    return [
        f"## 4. `{conf['command']}` against the reference",
        "",
        f"Wall time **{conf['wall_s']:.1f} s** (plain run of the command in a fresh process, verdict "
        f"{conf['verdict']}). The breakdown comes from a second run ({total:.1f} s) with a passive pytest "
        "plugin (`benchmarks/children/conftiming.py`, `-p benchmarks.children.conftiming`): "
        "every fixture setup is timed "
        "exclusive of nested ones, every test item whole; the engine, proxy, adapter and corpus fixtures "
        "and the session teardown are subtracted from the items they ran in, the rest is the scenario's "
        "(`properties` = scenario ids `prop-*`). Wall-clock stamps give start-up before the first item and "
        "the report and exit after the last. "
        f"Engine `startup_seconds`: {conf['engine_startup_seconds']} s. The report's per-scenario "
        f"`duration_s` sums to {conf['report_duration_s_sum']} s (it includes the fixtures' setup).",
        "",
        table(["phase", "seconds", "share"], rows),
        "",
    ]


def ingest(runs: list[dict[str, Any]]) -> list[str]:
    """Figure 5."""
    rows = [
        [
            r["engine"],
            f"{r['size']:,}",
            f"{r['ingest']['rows_per_s']:,.0f}",
            r["ingest"]["seconds"],
            r["ingest"]["flush_seconds"],
            r["ingest"].get("index_wait_seconds", "-"),
            r["engine_memory"]["vmhwm_mb"],
            r["engine_memory"]["vmrss_mb"],
        ]
        for r in runs
        if "not_run" not in r
    ]
    header = [
        "engine",
        "chunks",
        "ingest rows/s",
        "ingest s",
        "flush s",
        "index wait s",
        "peak RSS (VmHWM) MB",
        "RSS after MB",
    ]
    return [
        "## 5. Ingest and engine memory",
        "",
        table(header, rows),
        "",
        "Ingest is `MilvusKnowledgeStore.ingest` (upsert, batches of 256) of ready chunks with vectors, "
        "after the collection exists; `flush` follows, then the run waits until `describe_index` reports "
        "no pending rows (queries before that time the index build). A fresh engine per size, so VmHWM "
        "(server process and children, after the queries) is that size's peak.",
        "",
    ]


def stdio(st: dict[str, Any]) -> list[str]:
    """Figure 6."""
    paths = {k: v for k, v in st.items() if isinstance(v, dict) and "us_per_call_p50" in v}
    rows = [
        [k, v["us_per_call_p50"], v["us_per_call_p95"], f"{v['round_trips_per_s']:,.0f}"]
        for k, v in paths.items()
    ]
    return [
        "## 6. stdio adapter protocol, `canonicalize_label`",
        "",
        table(["path", "us per call (p50)", "p95", "round trips/s"], rows),
        "",
        f"Per-message overhead of the protocol: **{st['overhead_us_per_message']} us** "
        f"({st['stdio_vs_in_process_adapter']}x the in-process adapter call), against a trivial Python "
        f"child (`benchmarks/children/tiny_stdio.py`); {st['calls']['blocks']} interleaved blocks of "
        f"{st['calls']['per_block']} calls per path.",
        "",
    ]


def _dominant(p: dict[str, Any]) -> str:
    """One sentence: the top function by own time, and the biggest subtree under the entry point."""
    own = p["by_own_time"][0]
    inner = [f for f in p["by_cumulative"] if not f["function"].startswith("benchmarks/")][1:2]
    text = f"Most own time: `{own['function']}` ({own['share']:.0%})"
    if inner:
        text += (
            f"; the biggest subtree below the entry point: `{inner[0]['function']}` ({inner[0]['share']:.0%})"
        )
    return text + "."


def profiles(found: list[tuple[str, dict[str, Any]]]) -> list[str]:
    """Every profile taken for a missed target: top functions by own and by cumulative time."""
    if not found:
        return []
    out = ["## Profiles", ""]
    for title, p in found:
        own = [[f"`{f['function']}`", f["calls"], f"{f['share']:.1%}"] for f in p["by_own_time"][:8]]
        cumulative = [[f"`{f['function']}`", f["calls"], f"{f['share']:.1%}"] for f in p["by_cumulative"][:8]]
        out += [
            f"### {title}",
            "",
            f"Profiled {p['total_s']:.2f} s; waiting on gRPC replies (engine): **{p['wait_share']:.0%}**. "
            + _dominant(p),
            "",
            table(["own time", "calls", "share"], own),
            "",
            table(["cumulative", "calls", "share"], cumulative),
            "",
        ]
    return out

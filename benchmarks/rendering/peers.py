"""The peers' section of ``RESULTS.md``: each library's hybrid query beside its own bare call, and the
reference's lookup beside its own. Pure formatting, like ``_sections.py``."""

from __future__ import annotations

from typing import Any

from benchmarks.rendering.sections import ms, table

__all__ = ["peers"]

PEERS_NOTE = """Each library runs in its own venv (the one `examples/peers/run` builds from
`examples/peers/<library>/requirements.txt`), on the same Lite 2.5.1 server and corpus, right after the
reference's queries. It ingests the corpus into its own collection through its adapter's `prepare`
(the store the conformance run judges), then times its hybrid query (LangChain
`similarity_search_with_score` with `ranker_type="rrf"`, LlamaIndex `MilvusVectorStore.query` in hybrid
mode, Haystack `MilvusHybridRetriever.run`) interleaved with a bare `hybrid_search` from the same
process, on the library's own client, sending the request the library sent for that query (recorded in
an untimed first pass: sub-requests, ranker, limit, output fields). So `peer / bare` is what the
library adds to its own engine call, as `lookup / bare` is what the reference adds to its own; the
two bare calls differ by what each asks the engine for (below)."""


def peers(runs: list[dict[str, Any]]) -> list[str]:
    """Each peer's hybrid query / its bare hybrid_search, beside the reference's lookup / bare."""
    timed = [r for r in runs if r.get("peers")]
    if not timed:
        return []
    rows, notes = [], []
    for r in timed:
        where = f"{r['engine']} {r['size']:,}"
        rows.append(
            [
                f"reference ({r['engine_version']})",
                where,
                ms(r["latency_ms"]["lookup"]["p50"]),
                ms(r["latency_ms"]["bare_hybrid_same_fields"]["p50"]),
                f"**{r['lookup_vs_bare']['p50']:.3f}x**",
                f"{r['lookup_vs_bare']['paired_median']:.3f}x",
                ms(r["latency_ms"]["lookup"]["client_cpu_per_call"])
                + " / "
                + ms(r["latency_ms"]["bare_hybrid_same_fields"]["client_cpu_per_call"]),
            ]
        )
        for p in r["peers"]:
            if "not_run" in p:
                rows.append([p["library"], where, "-", "-", "not run", "-", "-"])
                notes.append(f"- {p['library']} ({where}): not run: {p['not_run']}")
                continue
            versions = ", ".join(f"{name} {v}" for name, v in p["versions"].items())
            rows.append(
                [
                    f"{p['library']} ({versions})",
                    where,
                    ms(p["peer_p50_ms"]),
                    ms(p["bare_p50_ms"]),
                    f"**{p['peer_vs_bare']['p50']:.3f}x**",
                    f"{p['peer_vs_bare']['paired_median']:.3f}x",
                    f"{ms(p['client_cpu_ms']['peer'])} / {ms(p['client_cpu_ms']['bare'])}",
                ]
            )
            differs = "; ".join(p["differs"]) or "the same ranker, RRF k and vectors in the reply"
            notes.append(
                f"- {p['library']} ({where}): asks for {', '.join(p['request'].get('output_fields') or [])}"
                f"; against the reference's request: {differs}."
            )
    header = ["", "where", "p50 ms", "its bare p50 ms", "/ bare p50", "median of per-query", "client CPU ms"]
    return [
        "## Peers: each library's hybrid query beside its own bare `hybrid_search`",
        "",
        PEERS_NOTE,
        "",
        table(header, rows),
        "",
        *notes,
        "",
    ]

"""Measure on a running engine each fact ``conformance.engines._facts`` states about it (docs/engines.md).

Every check is made with this venv's pymilvus in collections under a prefix of its own, dropped after.
A fact that says "supported" must work; one that says "lacking" must fail (or, for a lacking index
type, be refused). :func:`measured` returns what it found, in the same shape as the stated facts.
"""

from __future__ import annotations

import json
import secrets
from typing import Any

from conformance.boundary._protocol import EngineFacts

__all__ = ["CATEGORIES", "ESCAPED_FORMS", "REFUSED", "literal_matches", "measured"]

PROBED_INDEXES = ("FLAT", "IVF_FLAT", "IVF_SQ8", "IVF_PQ", "HNSW", "SCANN", "DISKANN", "AUTOINDEX")
CATEGORIES = {
    "quotes": 'O\'Reilly "Media"',
    "backslash": "C:\\shares\\kb",
    "newline": "line one\nline two",
    "non_ascii": "产品文档",  # the kit's knowledge base draws such categories
    "html": "<a>&b='c'=d",
}
ESCAPED_FORMS = {
    # What two clients' defaults write: Python's json.dumps escapes non-ASCII as \uXXXX, and Gson's
    # default HTML escaping writes < > & = ' as \u003c and the like (measured with Gson 2.10 here).
    "non_ascii": json.dumps(CATEGORIES["non_ascii"]),
    "html": '"' + "".join(f"\\u{ord(ch):04x}" if ch in "<>&='" else ch for ch in CATEGORIES["html"]) + '"',
}
REFUSED = "refused"
_PARAMS = {
    "HNSW": {"M": 8, "efConstruction": 64},
    "IVF_FLAT": {"nlist": 4},
    "IVF_SQ8": {"nlist": 4},
    "IVF_PQ": {"nlist": 4, "m": 2},  # m divides the dimension (2)
    "SCANN": {"nlist": 4},
}


def _works(call: Any) -> bool:
    try:
        call()
    except Exception:
        return False
    return True


class _Probe:
    def __init__(self, client: Any) -> None:
        self.client = client
        self.prefix = f"rqs_facts_{secrets.token_hex(3)}_"
        self.n = 0

    def name(self) -> str:
        self.n += 1
        return f"{self.prefix}{self.n}"

    def create(self, *, index: str = "FLAT", nullable: bool = False, bm25: bool = False) -> str:
        from pymilvus import DataType, Function, FunctionType

        schema = self.client.create_schema(auto_id=False)
        schema.add_field("pk", DataType.INT64, is_primary=True)
        schema.add_field("text", DataType.VARCHAR, max_length=256, enable_analyzer=bm25)
        if nullable:
            schema.add_field("category", DataType.VARCHAR, max_length=128, nullable=True)
        else:
            schema.add_field("category", DataType.VARCHAR, max_length=128)
        schema.add_field("vec", DataType.FLOAT_VECTOR, dim=2)
        params = self.client.prepare_index_params()
        params.add_index("vec", index_type=index, metric_type="L2", params=_PARAMS.get(index, {}))
        if bm25:
            schema.add_field("sparse", DataType.SPARSE_FLOAT_VECTOR)
            schema.add_function(
                Function(
                    name="bm25",
                    function_type=FunctionType.BM25,
                    input_field_names=["text"],
                    output_field_names=["sparse"],
                )
            )
            params.add_index("sparse", index_type="SPARSE_INVERTED_INDEX", metric_type="BM25")
        name = self.name()
        # Strong: a server answers a search right after an insert with the rows inserted
        self.client.create_collection(name, schema=schema, index_params=params, consistency_level="Strong")
        return name

    def rows(self, name: str) -> None:
        rows = [
            {"pk": i, "text": f"failover gateway {i}", "category": category, "vec": [1.0, 0.1 * i]}
            for i, category in enumerate(CATEGORIES.values(), start=1)
        ]
        self.client.insert(name, rows)

    def drop(self) -> None:
        for name in self.client.list_collections():
            if name.startswith(self.prefix):
                self.client.drop_collection(name)


def literal_matches(client: Any, name: str, literal: str) -> list[int]:
    hits = client.search(name, data=[[1.0, 0.0]], anns_field="vec", limit=5, filter=f"category == {literal}")
    return [h.get("id", h.get("pk")) for h in hits[0]]


def measured(client: Any, *, version: str) -> tuple[EngineFacts, dict[str, list[int] | str]]:
    """What the engine behind ``client`` does, as facts, and which pks a literal of each kind of category
    finds (its own pk, 1 to 5, when the literal works; :data:`REFUSED` when the engine refuses the
    filter): each kind (:data:`CATEGORIES`) written by ``json.dumps(c, ensure_ascii=False)``, and
    ``escaped_<kind>`` for the ``\\uXXXX`` forms other clients' defaults write (:data:`ESCAPED_FORMS`)."""
    probe = _Probe(client)
    try:
        indexes = tuple(i for i in PROBED_INDEXES if _works(lambda i=i: probe.create(index=i)))
        nullable = _works(lambda: _null_row(probe))
        bm25_name: str | None = None
        try:
            bm25_name = probe.create(bm25=True)
            probe.rows(bm25_name)
        except Exception:
            bm25_name = None
        sign = None
        hybrid = False
        if bm25_name is not None:
            scores = client.search(
                bm25_name,
                data=["failover"],
                anns_field="sparse",
                limit=3,
                search_params={"metric_type": "BM25"},
            )[0]
            sign = "non-positive" if all(h["distance"] <= 0 for h in scores) else "non-negative"
            hybrid = _works(lambda: _hybrid(client, bm25_name))
        plain = probe.create()
        probe.rows(plain)
        client.load_collection(plain)
        templates = _works(
            lambda: client.search(
                plain,
                data=[[1.0, 0.0]],
                anns_field="vec",
                limit=5,
                filter="category == {c}",
                filter_params={"c": CATEGORIES["quotes"]},
                timeout=5,
            )
        )
        literals = {kind: json.dumps(c, ensure_ascii=False) for kind, c in CATEGORIES.items()}
        literals |= {f"escaped_{kind}": literal for kind, literal in ESCAPED_FORMS.items()}
        found: dict[str, list[int] | str] = {}
        for kind, literal in literals.items():
            try:
                found[kind] = literal_matches(client, plain, literal)
            except Exception:
                found[kind] = REFUSED
        facts = EngineFacts(
            version=version,
            engine="measured",
            hybrid_search=hybrid,
            bm25=bm25_name is not None,
            bm25_scores=sign,  # type: ignore[arg-type]
            filter_templates=templates,
            nullable_fields=nullable,
            index_types=indexes,
        )
        return facts, found
    finally:
        probe.drop()


def _null_row(probe: _Probe) -> None:
    name = probe.create(nullable=True)
    probe.client.insert(name, [{"pk": 1, "text": "x", "category": None, "vec": [1.0, 0.0]}])
    probe.client.load_collection(name)
    rows = probe.client.query(name, filter="pk == 1", output_fields=["category"])
    if not rows or rows[0].get("category") is not None:
        raise AssertionError(f"the null did not come back as null: {rows}")


def _hybrid(client: Any, name: str) -> None:
    from pymilvus import AnnSearchRequest, RRFRanker

    requests = [
        AnnSearchRequest(data=[[1.0, 0.0]], anns_field="vec", param={"metric_type": "L2"}, limit=3),
        AnnSearchRequest(data=["failover"], anns_field="sparse", param={"metric_type": "BM25"}, limit=3),
    ]
    client.hybrid_search(name, requests, RRFRanker(60), limit=3)

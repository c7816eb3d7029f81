"""Raw pymilvus helpers of the engine-behaviour scenarios: collections, capability probes, searches.

Everything here talks to the engine through the kit's own client (``rqs_engine.client()``), never
through an implementation. Collections are named under the run's prefix and dropped when done.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

__all__ = ["Answer", "EngineKit", "Hit", "answer", "parse_vector", "table_rows"]

DENSE = "vector"
SPARSE = "sparse"
# Every sub-request and every search asks for more hits than any scenario table holds, so that ranks
# are those of the whole collection and nothing is cut off by a limit.
LIMIT = 16


def parse_vector(text: str) -> list[float]:
    """``"1, 0, 0.5"`` -> ``[1.0, 0.0, 0.5]``."""
    return [float(part) for part in text.split(",")]


def table_rows(datatable: list[list[str]]) -> list[dict[str, Any]]:
    """A Gherkin table as dicts; ``pk`` becomes an int, ``vector``/``first``/``second`` float lists."""
    header, *rows = datatable
    out = []
    for row in rows:
        record: dict[str, Any] = dict(zip((h.strip() for h in header), (c.strip() for c in row), strict=True))
        record["pk"] = int(record["pk"])
        for name in ("vector", "first", "second"):
            if name in record:
                record[name] = parse_vector(record[name])
        out.append(record)
    return out


@dataclass(frozen=True)
class Hit:
    """One hit as the engine returned it: primary key, its ``distance`` field, the output fields."""

    pk: Any
    score: float
    fields: dict[str, Any]


@dataclass(frozen=True)
class Answer:
    """What one request returned, or the error it raised; ``rerun`` repeats it with another filter."""

    hits: tuple[Hit, ...] | None
    error: BaseException | None
    rerun: Callable[[str | None], tuple[Hit, ...]]
    k: int | None = None
    requests: tuple[tuple[str, Any, str], ...] = ()  # the hybrid sub-requests: (field, query, metric)

    def hits_or_raise(self) -> tuple[Hit, ...]:
        """The hits; the engine's error when the request failed (the scenario is then ERRORED)."""
        if self.error is not None:
            raise self.error
        assert self.hits is not None
        return self.hits


def _pk(hit: Any) -> Any:
    # pymilvus names the key after the server's pk field ("pk" on Lite 3.x) or "id" (C++ engines).
    for key in ("id", "pk"):
        if key in hit:
            return hit[key]
    return hit["entity"]["pk"]


def _hits(result: Any) -> tuple[Hit, ...]:
    return _hits_per_query(result)[0]


def _hits_per_query(result: Any) -> tuple[tuple[Hit, ...], ...]:
    return tuple(
        tuple(Hit(_pk(h), float(h["distance"]), dict(h.get("entity") or {})) for h in hits) for hits in result
    )


def _first_line(exc: BaseException) -> str:
    code, details = getattr(exc, "code", None), getattr(exc, "details", None)
    if callable(code) and callable(details):  # a grpc.RpcError: its str() is a multi-line dump
        text = f"gRPC {getattr(code(), 'name', code())}: {details() or 'no details'}"
    else:
        text = f"{type(exc).__name__}: {exc}".strip().splitlines()[0]
    return text if len(text) <= 240 else text[:239] + "…"


@dataclass
class EngineKit:
    """The engine-behaviour state of one session: the documents collection and the probe results."""

    engine: Any
    created: list[str] = field(default_factory=list)
    documents: dict[tuple[Any, ...], str] = field(default_factory=dict)
    rows: dict[str, list[dict[str, Any]]] = field(default_factory=dict)
    _lacks: dict[str, str | None] = field(default_factory=dict)

    @property
    def client(self) -> Any:
        """The kit's raw pymilvus client."""
        return self.engine.client()

    @property
    def version(self) -> str:
        """The version the engine reported when it started (as in the report)."""
        return str(self.engine.describe().get("version"))

    # -- collections -------------------------------------------------------------------------------

    def create(self, suffix: str, schema: Any, index_params: Any) -> str:
        """Create a prefixed collection (replacing a leftover of the same name), load it, track it."""
        name = self.engine.collection_name(suffix)
        if self.client.has_collection(name):
            self.client.drop_collection(name)
        # Strong consistency: a search right after the insert must see every row on a real server.
        self.client.create_collection(name, schema=schema, consistency_level="Strong")
        # Empty, so nothing to build: sync=False spares pymilvus's half-second polling per index.
        self.client.create_index(name, index_params, sync=False)
        self.client.load_collection(name)
        self.created.append(name)
        return name

    def drop(self, name: str) -> None:
        """Drop one collection this kit created."""
        with contextlib.suppress(Exception):  # a dead engine must not hide the scenario's own error
            self.client.drop_collection(name)
        if name in self.created:
            self.created.remove(name)

    def drop_all(self) -> None:
        """Drop every collection this kit created (the engine's cleanup drops the prefix anyway)."""
        for name in list(self.created):
            self.drop(name)

    def documents_collection(self, rows: list[dict[str, Any]]) -> str:
        """The collection holding ``rows`` (pk, category, text, vector), created once per session."""
        key = tuple(tuple(sorted((k, str(v)) for k, v in row.items())) for row in rows)
        if key not in self.documents:
            self.documents[key] = self.create_documents(f"engine_docs_{len(self.documents)}", rows)
        return self.documents[key]

    def create_documents(self, suffix: str, rows: list[dict[str, Any]]) -> str:
        """A new collection holding ``rows``; with BM25 on ``text`` when the engine has BM25."""
        from pymilvus import DataType, Function, FunctionType

        bm25 = self.lacks("bm25") is None
        schema = self.client.create_schema(auto_id=False)
        schema.add_field("pk", DataType.INT64, is_primary=True)
        schema.add_field("category", DataType.VARCHAR, max_length=64)
        text_params = {"enable_analyzer": True} if bm25 else {}
        schema.add_field("text", DataType.VARCHAR, max_length=1024, **text_params)
        schema.add_field(DENSE, DataType.FLOAT_VECTOR, dim=len(rows[0]["vector"]))
        index = self.client.prepare_index_params()
        index.add_index(DENSE, index_type="FLAT", metric_type="L2")  # exact: no ANN approximation
        if bm25:
            schema.add_field(SPARSE, DataType.SPARSE_FLOAT_VECTOR)
            function = Function(
                name="bm25",
                function_type=FunctionType.BM25,
                input_field_names=["text"],
                output_field_names=[SPARSE],
            )
            schema.add_function(function)
            index.add_index(SPARSE, index_type="SPARSE_INVERTED_INDEX", metric_type="BM25")
        name = self.create(suffix, schema, index)
        self.client.insert(name, [{**row, DENSE: row["vector"]} for row in rows])
        self.rows[name] = rows
        return name

    def metric_collection(self, rows: list[dict[str, Any]], metric: str) -> str:
        """``rows`` (pk, category, vector) under a dense index of ``metric``; made once per session."""
        from pymilvus import DataType

        key = ("metric", metric, tuple(row["pk"] for row in rows))
        if key not in self.documents:
            schema = self.client.create_schema(auto_id=False)
            schema.add_field("pk", DataType.INT64, is_primary=True)
            schema.add_field("category", DataType.VARCHAR, max_length=64)
            schema.add_field(DENSE, DataType.FLOAT_VECTOR, dim=len(rows[0]["vector"]))
            index = self.client.prepare_index_params()
            index.add_index(DENSE, index_type="FLAT", metric_type=metric)
            name = self.create(f"engine_metric_{metric.lower()}", schema, index)
            self.client.insert(
                name, [{"pk": r["pk"], "category": r["category"], DENSE: r["vector"]} for r in rows]
            )
            self.rows[name] = rows
            self.documents[key] = name
        return self.documents[key]

    def two_vector_collection(self, suffix: str, rows: Sequence[tuple[int, list[float], list[float]]]) -> str:
        """A collection with two dense fields ``first`` and ``second``, rows inserted in the given order."""
        from pymilvus import DataType

        schema = self.client.create_schema(auto_id=False)
        schema.add_field("pk", DataType.INT64, is_primary=True)
        index = self.client.prepare_index_params()
        for field_name in ("first", "second"):
            schema.add_field(field_name, DataType.FLOAT_VECTOR, dim=len(rows[0][1]))
            index.add_index(field_name, index_type="FLAT", metric_type="L2")
        name = self.create(suffix, schema, index)
        for pk, first, second in rows:  # one insert per row: insertion order is part of the scenario
            self.client.insert(name, [{"pk": pk, "first": first, "second": second}])
        return name

    # -- capability probes -------------------------------------------------------------------------

    def lacks(self, feature: str) -> str | None:
        """Why the engine cannot do ``feature`` ("bm25" or "hybrid"), or None when it can."""
        if feature not in self._lacks:
            probe = {"bm25": self._probe_bm25, "hybrid": self._probe_hybrid}[feature]
            self._lacks[feature] = probe()
        return self._lacks[feature]

    def _probe_bm25(self) -> str | None:
        from pymilvus import DataType, Function, FunctionType

        try:
            schema = self.client.create_schema(auto_id=False)
            schema.add_field("pk", DataType.INT64, is_primary=True)
            schema.add_field("text", DataType.VARCHAR, max_length=64, enable_analyzer=True)
            schema.add_field(SPARSE, DataType.SPARSE_FLOAT_VECTOR)
            schema.add_function(Function("bm25", FunctionType.BM25, ["text"], [SPARSE]))
            index = self.client.prepare_index_params()
            index.add_index(SPARSE, index_type="SPARSE_INVERTED_INDEX", metric_type="BM25")
            self.drop(self.create("engine_probe_bm25", schema, index))
        except Exception as exc:
            return f"engine {self.version} has no BM25: a BM25 function collection fails ({_first_line(exc)})"
        return None

    def _probe_hybrid(self) -> str | None:
        from pymilvus import AnnSearchRequest, DataType, RRFRanker

        name = None
        try:
            schema = self.client.create_schema(auto_id=False)
            schema.add_field("pk", DataType.INT64, is_primary=True)
            schema.add_field(DENSE, DataType.FLOAT_VECTOR, dim=2)
            index = self.client.prepare_index_params()
            index.add_index(DENSE, index_type="FLAT", metric_type="L2")
            name = self.create("engine_probe_hybrid", schema, index)
            self.client.insert(name, [{"pk": 1, DENSE: [0.0, 1.0]}])
            requests = [AnnSearchRequest([[0.0, 0.0]], DENSE, {"metric_type": "L2"}, limit=1)] * 2
            self.client.hybrid_search(name, requests, RRFRanker(60), limit=1)
        except Exception as exc:
            return f"engine {self.version} has no hybrid search: a hybrid_search fails ({_first_line(exc)})"
        finally:
            if name is not None:
                self.drop(name)
        return None

    # -- requests ----------------------------------------------------------------------------------

    def dense(
        self,
        name: str,
        vector: list[float],
        *,
        expr: str | None = None,
        fields: Iterable[str] = ("category",),
        field_name: str = DENSE,
        metric: str = "L2",
        **page: int,
    ) -> tuple[Hit, ...]:
        """A search of a dense field (L2 unless ``metric`` says otherwise); ``page``: limit, offset."""
        return self.dense_many(
            name, [vector], expr=expr, fields=fields, field_name=field_name, metric=metric, **page
        )[0]

    def dense_many(
        self,
        name: str,
        vectors: Sequence[list[float]],
        *,
        expr: str | None = None,
        fields: Iterable[str] = ("category",),
        field_name: str = DENSE,
        metric: str = "L2",
        limit: int = LIMIT,
        **offset: int,
    ) -> tuple[tuple[Hit, ...], ...]:
        """One search call for several query vectors (nq > 1): the hits of each, in query order."""
        result = self.client.search(
            name,
            list(vectors),
            anns_field=field_name,
            limit=limit,
            filter=expr or "",
            output_fields=["pk", *fields],
            search_params={"metric_type": metric},
            **offset,
        )
        return _hits_per_query(result)

    def alone(self, name: str, field_name: str, query: Any, metric: str) -> tuple[Hit, ...]:
        """One hybrid sub-request run as a plain search."""
        if metric == "BM25":
            return self.bm25(name, query, field_name=field_name)
        return self.dense(name, query, field_name=field_name, fields=())

    def bm25(
        self, name: str, text: str, *, field_name: str = SPARSE, limit: int = LIMIT, **offset: int
    ) -> tuple[Hit, ...]:
        """A BM25 full-text search of the sparse field."""
        result = self.client.search(
            name,
            [text],
            anns_field=field_name,
            limit=limit,
            output_fields=["pk"],
            search_params={"metric_type": "BM25"},
            **offset,
        )
        return _hits(result)

    def hybrid(
        self,
        name: str,
        requests: Sequence[tuple[str, Any, str]],
        k: int | Any,
        *,
        expr: str | None = None,
        fields: Iterable[str] = ("category",),
        limit: int = LIMIT,
        **offset: int,
    ) -> tuple[Hit, ...]:
        """RRF(k) over ``(field, query, metric)`` sub-requests, ``expr`` set on every one of them; ``k`` may
        also be a pymilvus ranker (a WeightedRanker, say)."""
        many = [(field_name, [query], metric) for field_name, query, metric in requests]
        return self.hybrid_many(name, many, k, expr=expr, fields=fields, limit=limit, **offset)[0]

    def hybrid_many(
        self,
        name: str,
        requests: Sequence[tuple[str, Sequence[Any], str]],
        k: int | Any,
        *,
        expr: str | None = None,
        fields: Iterable[str] = ("category",),
        limit: int = LIMIT,
        **offset: int,
    ) -> tuple[tuple[Hit, ...], ...]:
        """One hybrid call whose sub-requests carry several queries each (nq > 1): hits per query."""
        from pymilvus import AnnSearchRequest, RRFRanker

        subs = [
            AnnSearchRequest(
                list(queries), field_name, {"metric_type": metric}, limit=LIMIT, expr=expr or None
            )
            for field_name, queries, metric in requests
        ]
        ranker = RRFRanker(k) if isinstance(k, int) else k
        result = self.client.hybrid_search(
            name, subs, ranker, limit=limit, output_fields=["pk", *fields], **offset
        )
        return _hits_per_query(result)


def answer(
    run: Callable[[str | None], tuple[Hit, ...]],
    expr: str | None,
    k: int | None = None,
    requests: Sequence[tuple[str, Any, str]] = (),
) -> Answer:
    """Run a request once, keeping the engine's error (a rejection can be the expected outcome)."""
    try:
        return Answer(run(expr), None, run, k, tuple(requests))
    except Exception as exc:
        return Answer(None, exc, run, k, tuple(requests))

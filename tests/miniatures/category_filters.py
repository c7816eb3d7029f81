"""Category filters as teams build them on Milvus: string literals and partitions (issue 33's inputs).

Every run filters by a category with a backslash and by a category's identifier twin (its punctuation
made ``_``, which no chunk carries; ``features/spec/input-model.md``). A filter that breaks on either
counts under R5's category filter, whatever scenario sees it (readings 18); a filter that names
partitions without collisions conforms. Each class is a
:class:`~tests.miniatures.from_the_spec.FromTheSpec` with its search replaced.
"""

from __future__ import annotations

import functools
import re
from typing import Any

import reference
from conformance.boundary._protocol import SearchRequest
from reference.store._schema import ABSENT, CATEGORY_FIELD, DENSE_FIELD, KEY_FIELD, OUTPUT_FIELDS
from reference.store._vectors import prepared_query
from tests.miniatures.from_the_spec import FromTheSpec

__all__ = [
    "PartitionPerCategory",
    "PartitionPerCategoryHexNames",
    "QuoteOnlyEscaping",
    "QuoteOnlyEscapingRaises",
]


class QuoteOnlyEscaping(FromTheSpec):
    """quality-gates: a filtered attempt searches the category only ("category-filter low-quality retry
    decisions", design note §5.5: L0 navigation, category filter). The filter literal escapes double
    quotes but not backslashes, so ``C:\\shares\\kb`` reaches Milvus as an unknown escape; the engine's
    refusal is read as "no chunk matches", and the filtered attempt is empty.
    """

    def engine_search(self, request: SearchRequest) -> list[Any]:
        try:
            return self.quote_only_search(request)
        except reference.StoreError:
            return []  # "the filter matched nothing"

    def quote_only_search(self, request: SearchRequest) -> list[Any]:
        if request.category is None or "\\" not in request.category:
            return super().engine_search(request)
        store = self._prepared()
        vector, sent = prepared_query(request.query_vector, store.dim, store.collection)
        expr = 'category == "' + request.category.replace('"', '\\"') + '"'
        if request.mode == "dense":
            return store._dense(sent, request.k, expr)
        return store._hybrid(request.query_text, vector, sent, request.k, expr, request.rrf_k)


class PartitionPerCategory(FromTheSpec):
    """quality-gates (category-filter, readings 18): each category's chunks live in a partition named from
    the category, every character but ASCII letters, digits and ``_`` made ``_`` (partition names allow
    no others), and a filtered search searches that partition. Two categories that differ only in such
    characters share a partition: ``tier_1_escalations``, which no chunk carries, finds the chunks of
    ``tier-1/escalations``.
    """

    def prepare(self, endpoint: Any, corpus: Any) -> None:
        super().prepare(endpoint, corpus)
        store = self._prepared()
        client, name = store.client, store.collection
        fields = [KEY_FIELD, DENSE_FIELD, *OUTPUT_FIELDS]
        rows = client.query(name, filter=f'{KEY_FIELD} != ""', output_fields=fields, limit=16384)
        client.delete(name, filter=f'{KEY_FIELD} != ""')
        by_partition: dict[str, list[dict[str, Any]]] = {}
        for row in rows:
            row = {f: row[f] for f in fields}
            row[DENSE_FIELD] = [float(x) for x in row[DENSE_FIELD]]
            by_partition.setdefault(self.partition(row[CATEGORY_FIELD]), []).append(row)
        for partition, members in by_partition.items():
            if not client.has_partition(name, partition):
                client.create_partition(name, partition)
            client.insert(name, members, partition_name=partition)
        client.load_collection(name)

    @staticmethod
    def partition(category: str | None) -> str:
        if category is None or category == ABSENT:
            return "_default"
        return "cat_" + re.sub(r"[^A-Za-z0-9_]", "_", category)

    def engine_search(self, request: SearchRequest) -> list[Any]:
        if request.category is None:
            return super().engine_search(request)
        store = self._prepared()
        partition = self.partition(request.category)
        if not store.client.has_partition(store.collection, partition):
            return []
        vector, sent = prepared_query(request.query_vector, store.dim, store.collection)
        client = store.client
        for method in ("search", "hybrid_search"):  # the store's calls, in this partition only
            setattr(
                client,
                method,
                functools.partial(getattr(type(client), method), client, partition_names=[partition]),
            )
        try:
            if request.mode == "dense":
                return store._dense(sent, request.k, "")
            return store._hybrid(request.query_text, vector, sent, request.k, "", request.rrf_k)
        finally:
            del client.search, client.hybrid_search


class PartitionPerCategoryHexNames(PartitionPerCategory):
    """Conforming: a partition per category, named by the category's UTF-8 bytes in hex, so no two
    categories share one; a search for a category without a partition answers no hits without asking
    Milvus (readings 17)."""

    @staticmethod
    def partition(category: str | None) -> str:
        if category is None or category == ABSENT:
            return "_default"
        return "cat_" + category.encode().hex()


class QuoteOnlyEscapingRaises(QuoteOnlyEscaping):
    """quality-gates (category-filter, readings 18): the same filter, and the engine's refusal of
    ``C:\\shares\\kb`` reaches the caller as an error. The same search without the category answers: the
    failure is the filter's (R5), not the scenario's.
    """

    def engine_search(self, request: SearchRequest) -> list[Any]:
        return self.quote_only_search(request)

"""The reference, with someone else's hand on its engine: at its first search, the collections it made
are dropped behind its back, straight on the engine (a pymilvus client of its own at
``$RQS_TEST_DROP_URI``, never through the kit's recording proxy), as another shell's ``clean --yes
--force`` would. The implementation itself does nothing wrong: whatever it answers next is not its
fault."""

from __future__ import annotations

import os

from conformance.adapters.reference import ReferenceAdapter
from conformance.boundary._protocol import Corpus, MilvusEndpoint, SearchReply, SearchRequest

__all__ = ["DroppedFromOutside"]


class DroppedFromOutside(ReferenceAdapter):
    """At the first search: its collections dropped from outside, then asked as usual."""

    def prepare(self, endpoint: MilvusEndpoint, corpus: Corpus) -> None:
        self._prefix = endpoint.collection_prefix
        self._dropped = False
        super().prepare(endpoint, corpus)

    def search(self, request: SearchRequest) -> SearchReply:
        if not self._dropped:
            self._dropped = True
            from pymilvus import MilvusClient

            hand = MilvusClient(uri=os.environ["RQS_TEST_DROP_URI"])
            try:
                for name in hand.list_collections():
                    if name.startswith(f"{self._prefix}reference_"):
                        hand.drop_collection(name)
            finally:
                hand.close()
        return super().search(request)

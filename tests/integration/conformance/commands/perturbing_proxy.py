"""A deliberately degraded engine for the upgrade check's tests: a gRPC proxy that scrambles dense queries.

It forwards every Milvus call as raw bytes, except that in ``Search`` and ``HybridSearch`` each float
query vector is replaced by a pseudo-random unit vector (seeded by the original, so the same query is
scrambled the same way): dense search then returns arbitrary chunks, BM25 is untouched. To a client it
is just another Milvus at a ``uri:``, as a broken engine upgrade would be.
"""

from __future__ import annotations

import hashlib
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import grpc
import numpy as np
from pymilvus.grpc_gen import common_pb2, milvus_pb2

__all__ = ["PerturbingProxy"]

_FLOAT_VECTOR = 101  # PlaceholderType.FloatVector


def _scramble_group(raw: bytes) -> bytes:
    group = common_pb2.PlaceholderGroup.FromString(raw)
    for placeholder in group.placeholders:
        if placeholder.type != _FLOAT_VECTOR:
            continue
        values = []
        for value in placeholder.values:
            dim = len(value) // 4
            seed = int.from_bytes(hashlib.blake2b(value, digest_size=8).digest(), "little")
            vector = np.random.default_rng(seed).standard_normal(dim).astype(np.float32)
            values.append((vector / np.linalg.norm(vector)).astype(np.float32).tobytes())
        del placeholder.values[:]
        placeholder.values.extend(values)
    return group.SerializeToString()


def _scramble(short: str, request: bytes) -> bytes:
    if short == "HybridSearch":
        message = milvus_pb2.HybridSearchRequest.FromString(request)
        for sub in message.requests:
            sub.placeholder_group = _scramble_group(sub.placeholder_group)
        return message.SerializeToString()
    message = milvus_pb2.SearchRequest.FromString(request)
    if len(message.sub_reqs):
        for sub in message.sub_reqs:
            sub.placeholder_group = _scramble_group(sub.placeholder_group)
    else:
        message.placeholder_group = _scramble_group(message.placeholder_group)
    return message.SerializeToString()


class _Handler(grpc.GenericRpcHandler):
    def __init__(self, channel: grpc.Channel) -> None:
        self._channel = channel

    def service(self, details: Any) -> Any:
        method: str = details.method
        short = method.rsplit("/", 1)[-1]
        forward = self._channel.unary_unary(method)

        def unary(request: bytes, context: Any) -> bytes:
            if short in ("Search", "HybridSearch"):
                request = _scramble(short, request)
            metadata = [
                (k, v)
                for k, v in context.invocation_metadata()
                if not k.startswith((":", "grpc-", "user-agent"))
            ]
            try:
                response: bytes = forward(request, metadata=metadata, timeout=60)
            except grpc.RpcError as exc:
                context.abort(exc.code(), exc.details() or "")
            return response

        return grpc.unary_unary_rpc_method_handler(unary)


class PerturbingProxy:
    """``with PerturbingProxy("127.0.0.1:19530") as uri:`` a Milvus whose dense search is broken."""

    def __init__(self, target: str) -> None:
        self.target = target.split("://")[-1]

    def __enter__(self) -> str:
        self._channel = grpc.insecure_channel(self.target)
        self._server = grpc.server(ThreadPoolExecutor(max_workers=8))
        self._server.add_generic_rpc_handlers((_Handler(self._channel),))
        port = self._server.add_insecure_port("127.0.0.1:0")
        self._server.start()
        return f"http://127.0.0.1:{port}"

    def __exit__(self, *exc: object) -> None:
        self._server.stop(grace=1.0).wait(5.0)
        self._channel.close()

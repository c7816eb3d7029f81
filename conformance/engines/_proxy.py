"""A recording gRPC proxy in front of Milvus: which RPCs an implementation really made.

Black-box answers cannot prove "dense mode SHALL call dense ANN only": an implementation could run a
BM25 search too and discard it. The proxy sits on 127.0.0.1 between the implementation and the engine,
forwards every call as raw bytes (so it works for any client, in any language, and for any Milvus
version), and records the method; ``Search`` and ``HybridSearch`` requests are decoded with pymilvus's
generated protobuf classes to see which vector field each (sub-)search used and whether its query was
a dense vector, a sparse vector, or text (a BM25 full-text search).

grpcio and pymilvus are imported when a proxy starts, never at import time.
"""

from __future__ import annotations

import functools
import threading
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import Any, Literal
from urllib.parse import urlsplit

from ..boundary._errors import EngineError
from ._deadline import PROBE_SECONDS, abandon, abandoned, call_deadline

__all__ = ["RecordedCall", "RecordingProxy", "SearchTarget"]

QueryKind = Literal["dense", "sparse", "text", "unknown"]
_MAX_MESSAGE = -1  # unlimited both ways: a corpus insert can be large
THREAD_PREFIX = "rqs-recording-proxy"  # its worker threads' names: close() ends every one of them
# A forwarded call waits on the engine at most the kit's engine-call deadline (stretched with the load):
# an implementation whose client waits for ever must not hang the run on a frozen engine. Forwarding
# ctx.time_remaining() unchanged would fail calls at once (it is huge when the client set no deadline).
_SERVICE_PREFIX = "/milvus.proto.milvus.MilvusService/"
# PlaceholderType values (common.proto): what the query of one (sub-)search was made of.
_DENSE_TYPES = {100, 101, 102, 103, 105}  # binary, float, float16, bfloat16, int8 vectors
_SPARSE_TYPES = {104}
_TEXT_TYPES = {21}  # VarChar: raw text for a BM25 function
# What counts as the engine failing rather than the request being wrong: Milvus's service errors (not
# ready, unavailable, memory or rate limit, internal: codes 1-5) and its catch-all 65535; in gRPC terms,
# the codes of a server that could not serve. A request the engine rejects (a filter it cannot parse,
# code 6 on Lite, parameter errors 1100 and up on the server) is the implementation's own answer.
_ENGINE_FAILURES = frozenset({1, 2, 3, 4, 5, 65535})
_ENGINE_FAILURES_GRPC = frozenset(
    {"UNAVAILABLE", "DEADLINE_EXCEEDED", "RESOURCE_EXHAUSTED", "INTERNAL", "ABORTED", "UNKNOWN"}
)


@dataclass(frozen=True)
class SearchTarget:
    """One (sub-)search: the vector field it ran on, what its query was, and its metric."""

    anns_field: str | None
    kind: QueryKind
    metric_type: str | None = None

    def describe(self) -> str:
        metric = f", metric {self.metric_type}" if self.metric_type else ""
        return f"{self.kind} query on field {self.anns_field!r}{metric}"


@dataclass(frozen=True)
class RecordedCall:
    """One RPC the proxy forwarded. ``searches`` is empty for anything but (hybrid) search.

    A ``Query`` keeps its filter (``expr``); a plain ``Search`` keeps the primary keys it returned and
    the name of the primary field, so that fetching exactly those rows reads as hydration, not retrieval.
    """

    method: str
    collection: str | None = None
    searches: tuple[SearchTarget, ...] = field(default=())
    expr: str | None = None
    result_keys: tuple[object, ...] | None = None
    primary_field: str | None = None
    engine_error: str | None = (
        None  # the engine failing the call (a service error status, gRPC's UNAVAILABLE...)
    )
    succeeded: bool = True  # the reply's status said success (a refused CreateCollection made nothing)

    @property
    def is_search(self) -> bool:
        return self.method in ("Search", "HybridSearch", "SearchByPrimaryKeys")

    def describe(self) -> str:
        if self.expr is not None:
            return f"{self.method}({self.collection or ''}: filter {self.expr!r})"
        if not self.searches:
            return f"{self.method}({self.collection or ''})"
        return f"{self.method}({self.collection}: {'; '.join(s.describe() for s in self.searches)})"


class RecordingProxy:
    """Forward ``127.0.0.1:<free port>`` to ``target`` and record every call.

    ``target`` is ``host:port`` or a Milvus URI (``http://host:port``; ``https://`` dials the engine
    with TLS). The token travels as call metadata and is forwarded untouched, never recorded.
    """

    def __init__(self, target: str) -> None:
        parts = urlsplit(target if "://" in target else f"http://{target}")
        if not parts.hostname or not parts.port:
            raise EngineError(f"recording proxy: {target!r} has no host:port to forward to")
        self.target = f"{parts.hostname}:{parts.port}"
        self._engine_uri = target  # abandoned (the run gave up on the engine): calls fail at once
        self.secure = parts.scheme == "https"
        self._calls: list[RecordedCall] = []
        self._lock = threading.Lock()
        self._server: Any = None
        self._channel: Any = None
        self._workers: Any = None
        self._abandoned = False
        self._probing = False
        self.port: int | None = None

    @property
    def uri(self) -> str:
        """Where clients connect instead of the engine (after :meth:`start`)."""
        if self.port is None:
            raise EngineError("recording proxy: start() it first")
        return f"http://127.0.0.1:{self.port}"

    def start(self) -> str:
        """Start serving; return the proxy's URI."""
        from concurrent.futures import ThreadPoolExecutor

        import grpc

        options = [
            ("grpc.max_send_message_length", _MAX_MESSAGE),
            ("grpc.max_receive_message_length", _MAX_MESSAGE),
        ]
        if self.secure:
            self._channel = grpc.secure_channel(self.target, grpc.ssl_channel_credentials(), options)
        else:
            self._channel = grpc.insecure_channel(self.target, options)
        # Clients ping every minute or so; a server that refuses pings would drop their connection.
        server_options = [
            *options,
            ("grpc.keepalive_permit_without_calls", 1),
            ("grpc.http2.min_ping_interval_without_data_ms", 5000),
        ]
        self._workers = ThreadPoolExecutor(max_workers=16, thread_name_prefix=THREAD_PREFIX)
        self._server = grpc.server(self._workers, options=server_options)
        self._server.add_generic_rpc_handlers((_Forwarder(self),))
        port = self._server.add_insecure_port("127.0.0.1:0")  # loopback only
        if not port:
            raise EngineError("recording proxy: could not bind a port on 127.0.0.1")
        self._server.start()
        self.port = port
        return self.uri

    def mark(self) -> int:
        """A position in the record; pass it to :meth:`calls_since`."""
        with self._lock:
            return len(self._calls)

    def calls_since(self, mark: int = 0) -> list[RecordedCall]:
        """Every call recorded after ``mark``, in the order they arrived."""
        with self._lock:
            return list(self._calls[mark:])

    def _record(self, call: RecordedCall) -> None:
        with self._lock:
            self._calls.append(call)

    def abandon(self) -> None:
        """The engine stopped answering: cancel every forwarded call still waiting on it, and fail every
        later one at once (DEADLINE_EXCEEDED), so that an implementation closing down does not wait on it."""
        self._abandoned = True
        channel = self._channel
        if channel is not None:
            channel.close()  # cancels the calls in flight; the forwarder checks the flag before the next

    @property
    def abandoned(self) -> bool:
        return self._abandoned or abandoned(self._engine_uri)

    def _after_late_call(self, late: str) -> None:
        """A forwarded call got no answer in time: ask the engine one short question (its version); if it
        does not answer that either, give up on it, so that an implementation asking again (a property's
        replays) fails at once instead of waiting a deadline per call."""
        with self._lock:
            if self._probing or self.abandoned:
                return
            self._probing = True
        try:
            channel = self._channel
            if channel is not None:
                channel.unary_unary(_SERVICE_PREFIX + "GetVersion")(b"", timeout=PROBE_SECONDS)
        except Exception:
            # The kit's own client gives up on it too: the run ends in bounded time, saying why.
            why = f"{late} got no answer within its deadline, nor its version within {PROBE_SECONDS:g} s"
            abandon(self._engine_uri, why)
            self.abandon()
        finally:
            self._probing = False

    def close(self) -> None:
        """Stop serving and end every thread the proxy started, in bounded time.

        In-flight calls get a second to finish; then the upstream channel is closed, which cancels any
        forwarded call still waiting on its engine, and the worker threads are told to end. Interpreter
        exit joins those threads: one left blocked on its engine (up to the forwarding cap) hung an
        interrupted selftest for good.
        """
        server, self._server = self._server, None
        channel, self._channel = self._channel, None
        workers, self._workers = self._workers, None
        try:
            if server is not None:
                server.stop(grace=0.0 if self.abandoned else 1.0).wait(5.0)
        finally:
            if channel is not None:
                channel.close()
            if workers is not None:
                workers.shutdown(wait=False, cancel_futures=True)

    def __enter__(self) -> RecordingProxy:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class _Forwarder:
    """A generic handler: every method, unary or streaming, forwarded as raw bytes."""

    def __init__(self, proxy: RecordingProxy) -> None:
        import grpc

        self._grpc = grpc
        self._proxy = proxy

    # grpc looks these handlers up by duck typing (GenericRpcHandler.service).
    def service(self, details: Any) -> Any:
        grpc = self._grpc
        method: str = details.method
        channel = self._proxy._channel
        short = method.rsplit("/", 1)[-1]

        def metadata(context: Any) -> list[tuple[str, Any]]:
            skip = ("user-agent", "grpc-")
            return [(k, v) for k, v in context.invocation_metadata() if not k.startswith((":", *skip))]

        def timeout(context: Any) -> float:
            remaining = context.time_remaining()
            deadline = call_deadline()
            return deadline if remaining is None else min(remaining, deadline)

        def given_up(context: Any) -> None:
            if self._proxy.abandoned:
                # DEADLINE_EXCEEDED, not UNAVAILABLE: clients (pymilvus) retry the latter for minutes.
                context.abort(
                    grpc.StatusCode.DEADLINE_EXCEEDED,
                    "the kit gave up on this engine: it stopped answering within its deadline",
                )

        def guarded(call: Callable[[Any, Any], Any]) -> Callable[[Any, Any], Any]:
            def handler(request: Any, context: Any) -> Any:
                try:
                    return call(request, context)
                except grpc.RpcError as exc:  # the engine's answer, passed on as it is
                    context.abort(exc.code(), exc.details() or "")

            return handler

        @guarded
        def unary(request: bytes, context: Any) -> bytes:
            given_up(context)
            call = _decode(short, method, request)
            forward = channel.unary_unary(method)
            try:
                response: bytes = forward(request, metadata=metadata(context), timeout=timeout(context))
            except grpc.RpcError as exc:
                failed = exc.code().name in _ENGINE_FAILURES_GRPC
                said = f"{exc.code().name}: {exc.details() or ''}" if failed else None
                self._proxy._record(replace(call, engine_error=said, succeeded=False))
                if exc.code() == grpc.StatusCode.DEADLINE_EXCEEDED:
                    self._proxy._after_late_call(f"the implementation's {short} (through the kit's proxy)")
                raise
            status = _status(method, response)
            answered = replace(call, engine_error=_engine_failure(status), succeeded=status is None)
            if short == "Search" and len(call.searches) == 1 and answered.engine_error is None:
                answered = _with_results(answered, response)
            self._proxy._record(answered)
            return response

        def server_stream(request: bytes, context: Any) -> Any:
            given_up(context)
            self._proxy._record(RecordedCall(method=short))
            forward = channel.unary_stream(method)
            try:
                yield from forward(request, metadata=metadata(context), timeout=timeout(context))
            except grpc.RpcError as exc:
                context.abort(exc.code(), exc.details() or "")

        kind = _streaming_methods().get(method)
        if kind is None:
            return grpc.unary_unary_rpc_method_handler(unary)
        if kind == "server":
            return grpc.unary_stream_rpc_method_handler(server_stream)
        return None  # client/bidi streaming (replication only): not proxied, the client sees UNIMPLEMENTED


@functools.cache
def _methods() -> dict[str, Any]:
    """Every method of Milvus's gRPC services, by full name (``/milvus.proto.milvus.MilvusService/...``)."""
    try:
        from pymilvus.grpc_gen import milvus_pb2
    except ImportError:  # pragma: no cover - pymilvus is a dependency of the kit
        return {}
    return {
        f"/{service.full_name}/{m.name}": m
        for service in milvus_pb2.DESCRIPTOR.services_by_name.values()
        for m in service.methods
    }


@functools.cache
def _streaming_methods() -> dict[str, str]:
    return {
        name: "bidi" if m.client_streaming else "server"
        for name, m in _methods().items()
        if m.client_streaming or m.server_streaming
    }


def _decode(short: str, method: str, request: bytes) -> RecordedCall:
    """Best effort: an undecodable request is still recorded, by method name."""
    if method.startswith(_SERVICE_PREFIX) and short == "Query":
        return _query(request)
    if not method.startswith(_SERVICE_PREFIX) or short not in ("Search", "HybridSearch"):
        return RecordedCall(method=short, collection=_collection(short, request))
    from pymilvus.grpc_gen import milvus_pb2

    try:
        if short == "HybridSearch":
            message = milvus_pb2.HybridSearchRequest.FromString(request)
            targets = tuple(_target(sub.search_params, sub.placeholder_group) for sub in message.requests)
        else:
            message = milvus_pb2.SearchRequest.FromString(request)
            if len(message.sub_reqs):  # the newer single-RPC form of a hybrid search
                targets = tuple(_target(s.search_params, s.placeholder_group) for s in message.sub_reqs)
            else:
                targets = (_target(message.search_params, message.placeholder_group),)
    except Exception:  # a newer or older protocol than ours: keep the method, say nothing more
        return RecordedCall(method=short, searches=(SearchTarget(None, "unknown"),))
    return RecordedCall(method=short, collection=message.collection_name or None, searches=targets)


def _target(params: Any, placeholder_group: bytes) -> SearchTarget:
    from pymilvus.grpc_gen import common_pb2

    values = {p.key: p.value for p in params}
    kind: QueryKind = "unknown"
    group = common_pb2.PlaceholderGroup.FromString(placeholder_group)
    if group.placeholders:
        ptype = group.placeholders[0].type
        kind = "dense" if ptype in _DENSE_TYPES else "sparse" if ptype in _SPARSE_TYPES else kind
        kind = "text" if ptype in _TEXT_TYPES else kind
    return SearchTarget(values.get("anns_field") or None, kind, values.get("metric_type") or None)


def _collection(short: str, request: bytes) -> str | None:
    from pymilvus.grpc_gen import milvus_pb2

    message_type = getattr(milvus_pb2, f"{short}Request", None)
    if message_type is None or "collection_name" not in message_type.DESCRIPTOR.fields_by_name:
        return None
    try:
        return message_type.FromString(request).collection_name or None
    except Exception:
        return None


def _query(request: bytes) -> RecordedCall:
    from pymilvus.grpc_gen import milvus_pb2

    try:
        message = milvus_pb2.QueryRequest.FromString(request)
    except Exception:
        return RecordedCall(method="Query")
    return RecordedCall(method="Query", collection=message.collection_name or None, expr=message.expr)


@functools.cache
def _reply_types() -> dict[str, Any]:
    """The reply message class of every unary Milvus method, by its full name."""
    from google.protobuf import message_factory

    return {
        name: message_factory.GetMessageClass(m.output_type)
        for name, m in _methods().items()
        if not (m.client_streaming or m.server_streaming)
    }


def _status(method: str, response: bytes) -> tuple[int, str] | None:
    """The error code and reason a Milvus reply carries in its status, or None for a success.

    Milvus answers most failures in-band: a successful gRPC call whose reply's status says what went
    wrong. Replies that are a bare status, or carry one in a ``status`` field, are read; any other reply
    (or one this pymilvus cannot parse) counts as a success.
    """
    reply_type = _reply_types().get(method)
    if reply_type is None:
        return None
    try:
        reply = reply_type.FromString(response)
    except Exception:
        return None
    fields = reply_type.DESCRIPTOR.fields_by_name
    if "error_code" in fields and "reason" in fields:
        status = reply  # the reply is a common.Status itself
    elif "status" in fields and reply.HasField("status"):
        status = reply.status
    else:
        return None
    code = getattr(status, "code", 0) or getattr(status, "error_code", 0)
    return (int(code), status.reason or "no reason given") if code else None


def _engine_failure(status: tuple[int, str] | None) -> str | None:
    """``code 65535: ...`` when the status is the engine failing; None for a success or a request's own
    fault (a bad filter, a wrong field...), which is the implementation's."""
    if status is None or status[0] not in _ENGINE_FAILURES:
        return None
    return f"code {status[0]}: {status[1]}"


def _with_results(call: RecordedCall, response: bytes) -> RecordedCall:
    """The search call with the primary keys its reply returned (unchanged if the reply is not readable)."""
    from pymilvus.grpc_gen import milvus_pb2

    try:
        results = milvus_pb2.SearchResults.FromString(response).results
    except Exception:
        return call
    ids = results.ids
    keys: tuple[object, ...] = tuple(ids.int_id.data) if ids.HasField("int_id") else tuple(ids.str_id.data)
    return replace(call, result_keys=keys, primary_field=results.primary_field_name or None)

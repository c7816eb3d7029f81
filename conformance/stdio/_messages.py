"""The stdio protocol's messages, built from the adapter boundary's wire models.

Nothing here repeats a field list of :mod:`conformance.boundary._protocol`: a request message is an envelope
(``type``, ``seq``) around the very model the in-process Protocol takes, and a reply is an envelope
(``seq``) around the very model it returns. JSON Schema is generated from these classes, never written
by hand, so the schema, the kit and the in-process adapters cannot drift apart.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import (
    ConfigDict,
    Discriminator,
    Field,
    SerializationInfo,
    SerializerFunctionWrapHandler,
    Tag,
    TypeAdapter,
    field_serializer,
)

from ..boundary._protocol import (
    REPLY_TYPES,
    Corpus,
    LookupRequest,
    MilvusEndpoint,
    PostProcessRequest,
    QualityRequest,
    SearchRequest,
    WholeNumber,
    Wire,
)

__all__ = [
    "OPERATIONS",
    "PROTOCOL_VERSION",
    "REPLY_SHAPES",
    "REVEAL_TOKEN",
    "CanonicalizeLabelMessage",
    "Envelope",
    "ErrorDetail",
    "ErrorReply",
    "KitMessage",
    "LookupMessage",
    "PostProcessMessage",
    "PrepareMessage",
    "QualityScoreMessage",
    "SearchMessage",
    "SkippedReply",
    "StartMessage",
    "StopMessage",
    "kit_messages",
    "reply_adapter",
]

PROTOCOL_VERSION = 1
SPEC_NAME = "rag-retrieval-quality-score"
# Serialization context key: only the bytes written to the child's stdin carry the real token.
REVEAL_TOKEN = "reveal_token"


# -- kit -> implementation -----------------------------------------------------------------------


class StartMessage(Wire):
    """First line the kit writes. The reply's ``result`` is an :class:`ImplementationInfo`."""

    type: Literal["start"]
    seq: int
    protocol_version: int = PROTOCOL_VERSION
    spec: str = SPEC_NAME
    kit_version: str


class CanonicalizeLabelMessage(Wire):
    """``labels``: the reply's ``result`` is the canonical label string."""

    type: Literal["canonicalize_label"]
    seq: int
    label: str


class QualityScoreMessage(Wire):
    """``quality``: the reply's ``result`` is the qualityScore, a number."""

    type: Literal["quality_score"]
    seq: int
    request: QualityRequest


class PostProcessMessage(Wire):
    """``post_process``: the reply's ``result`` is a PostProcessReply."""

    type: Literal["post_process"]
    seq: int
    request: PostProcessRequest


class PrepareMessage(Wire):
    """``search``/``lookup``: ingest ``corpus`` into the Milvus at ``endpoint``; ``result`` is null.

    ``endpoint.token`` is the only secret of the protocol. It travels on the child's stdin (not in
    argv or the environment, which other local users can read), and nowhere else: repr, logs, error
    messages and reports show it masked.
    """

    type: Literal["prepare"]
    seq: int
    endpoint: MilvusEndpoint
    corpus: Corpus

    @field_serializer("endpoint", mode="wrap")
    def _token_on_stdin_only(
        self, endpoint: MilvusEndpoint, handler: SerializerFunctionWrapHandler, info: SerializationInfo
    ) -> Any:
        data = handler(endpoint)
        if isinstance(info.context, dict) and info.context.get(REVEAL_TOKEN) and endpoint.token is not None:
            data["token"] = endpoint.token.get_secret_value()
        return data


class SearchMessage(Wire):
    """``search``: the reply's ``result`` is a SearchReply."""

    type: Literal["search"]
    seq: int
    request: SearchRequest


class LookupMessage(Wire):
    """``lookup``: the reply's ``result`` is a LookupReply."""

    type: Literal["lookup"]
    seq: int
    request: LookupRequest


class StopMessage(Wire):
    """Last line: drop what ``prepare`` created, reply ``result: null`` and exit."""

    type: Literal["stop"]
    seq: int


KitMessage = Annotated[
    StartMessage
    | CanonicalizeLabelMessage
    | QualityScoreMessage
    | PostProcessMessage
    | PrepareMessage
    | SearchMessage
    | LookupMessage
    | StopMessage,
    Field(discriminator="type"),
]
"""Every line the kit writes, told apart by ``type``."""


# -- implementation -> kit -----------------------------------------------------------------------


class Envelope(Wire):
    """Base of every reply line and its ``error``: fields the protocol does not define are kept.

    The page says such fields, beside ``result`` or inside it, "are kept and reported as notes, never
    failed" (``docs/stdio-protocol.md``): a program's ``elapsedMs`` or trace id beside its answer is no
    fault. The codec reads them from ``model_extra`` and notes them.
    """

    model_config = ConfigDict(extra="allow")


REPLY_SHAPES = ("result", "skipped", "error")
"""The three keys that say a reply's shape: a reply carries exactly one of them."""


def _one_shape(shape: str) -> ConfigDict:
    """Config of the reply carrying ``shape``: its schema refuses the other two shape keys, as the
    union does (:func:`_reply_kind`), so a line with both ``result`` and ``error`` is no reply."""
    others = [key for key in REPLY_SHAPES if key != shape]
    return ConfigDict(json_schema_extra={"not": {"anyOf": [{"required": [key]} for key in others]}})


class ErrorDetail(Envelope):
    """Why the implementation could not answer: the scenario is ERRORED (or FAILED where refusing is
    itself the wrong answer), with this text in the report."""

    message: str
    kind: str | None = Field(default=None, description="e.g. the exception class")
    context: str | None = Field(default=None, description="e.g. a stack trace; shown shortened")


class SkippedReply(Envelope):
    """The implementation declines this one question: the scenario is NOT APPLICABLE, with the reason."""

    model_config = _one_shape("skipped")

    seq: WholeNumber
    skipped: str = Field(min_length=1)


class ErrorReply(Envelope):
    """The implementation failed to answer this one question."""

    model_config = _one_shape("error")

    seq: WholeNumber
    error: ErrorDetail


def _result_model(operation: str, result: Any) -> type[Envelope]:
    name = "".join(part.title() for part in operation.split("_")) + "Result"
    # ``result`` has no default: it is required even where it is null (``prepare``, ``stop``), as the
    # schema says; a JSON library that drops nulls (Gson without serializeNulls) must write it anyway.
    namespace: dict[str, Any] = {
        "__annotations__": {"seq": WholeNumber, "result": result},
        "__module__": __name__,
        "model_config": _one_shape("result"),
    }
    namespace["__doc__"] = f"A successful reply to ``{operation}``: ``result`` is required."
    return type(name, (Envelope,), namespace)


# The operation each request type names, and the type of the ``result`` of a successful reply: the
# Protocol's questions (describe is the start handshake), then the request to stop.
OPERATIONS: dict[str, Any] = {
    "start": REPLY_TYPES["describe"],
    **{operation: reply for operation, reply in REPLY_TYPES.items() if operation != "describe"},
    "stop": None,
}
_RESULT_MODELS = {operation: _result_model(operation, result) for operation, result in OPERATIONS.items()}


def _reply_kind(value: Any) -> str | None:
    # Decide by which key is present, so a wrong reply gets the errors of the one shape it meant; a
    # reply with two of them has no shape (None: the union's error), as its schema says.
    keys = value if isinstance(value, dict) else vars(value)
    if sum(key in keys for key in REPLY_SHAPES) > 1:
        return None
    if "error" in keys:
        return "error"
    return "skipped" if "skipped" in keys else "result"


def reply_adapter(operation: str) -> TypeAdapter[Any]:
    """The validator (and schema source) of every acceptable reply line to ``operation``."""
    return _REPLIES[operation]


UNSKIPPABLE = ("start", "stop")
"""Requests a program may not decline: the handshake, and the request to stop."""


_DISCRIMINATOR = Discriminator(
    _reply_kind,
    custom_error_type="reply_shape",
    custom_error_message="a reply carries exactly one of result, skipped and error",
)


def _build_reply_adapter(operation: str) -> TypeAdapter[Any]:
    if operation in UNSKIPPABLE:
        union: Any = Annotated[
            Annotated[_RESULT_MODELS[operation], Tag("result")] | Annotated[ErrorReply, Tag("error")],
            _DISCRIMINATOR,
        ]
    else:
        union = Annotated[
            Annotated[_RESULT_MODELS[operation], Tag("result")]
            | Annotated[SkippedReply, Tag("skipped")]
            | Annotated[ErrorReply, Tag("error")],
            _DISCRIMINATOR,
        ]
    return TypeAdapter(union)


_REPLIES = {operation: _build_reply_adapter(operation) for operation in OPERATIONS}
_KIT = TypeAdapter(KitMessage)


def kit_messages() -> TypeAdapter[Any]:
    """The validator (and schema source) of every line the kit writes."""
    return _KIT


MESSAGE_TYPES: dict[str, type[Wire]] = {
    "start": StartMessage,
    "canonicalize_label": CanonicalizeLabelMessage,
    "quality_score": QualityScoreMessage,
    "post_process": PostProcessMessage,
    "prepare": PrepareMessage,
    "search": SearchMessage,
    "lookup": LookupMessage,
    "stop": StopMessage,
}

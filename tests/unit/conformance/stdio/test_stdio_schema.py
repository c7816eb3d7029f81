"""The stdio protocol's JSON Schema is generated from the models and accepts what the kit really sends."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from pydantic import ValidationError

from conformance import Corpus, CorpusChunk, MilvusEndpoint, QualityRequest, SearchRequest
from conformance.boundary._errors import InvalidReplyError
from conformance.commands._cli import main
from conformance.stdio import kit_messages, protocol_schemas, reply_adapter
from conformance.stdio._codec import Codec
from conformance.stdio._messages import OPERATIONS, REVEAL_TOKEN, PrepareMessage

ENDPOINT = MilvusEndpoint(uri="http://127.0.0.1:19530", token="tok-123", collection_prefix="rqs_x_")
CORPUS = Corpus(
    name="c", dim=2, chunks=(CorpusChunk(doc_id="d", chunk_index=0, text="t", vector=(1.0, 0.0)),)
)


def _lines() -> list[str]:
    codec = Codec(validate=True)  # validate: the kit checks its own lines against the models too
    request = SearchRequest(query_text="q", query_vector=(1.0, 0.0), mode="dense", k=3)
    return [
        codec.encode("start", 1, {"kit_version": "0"}),
        codec.encode("canonicalize_label", 2, {"label": "rrf_fused"}),
        codec.encode("prepare", 3, {"endpoint": ENDPOINT, "corpus": CORPUS}),
        codec.encode("search", 4, {"request": request}),
        codec.encode("stop", 5, {}),
    ]


def test_one_schema_per_direction_and_operation() -> None:
    schemas = protocol_schemas()
    assert set(schemas) == {"request.schema.json"} | {f"reply.{op}.schema.json" for op in OPERATIONS}
    mapping = schemas["request.schema.json"]["discriminator"]["mapping"]
    assert set(mapping) == set(OPERATIONS)


def test_the_token_reaches_stdin_only() -> None:
    message = PrepareMessage(type="prepare", seq=1, endpoint=ENDPOINT, corpus=CORPUS)
    assert "tok-123" not in repr(message)
    assert "tok-123" not in message.model_dump_json()
    assert '"token":"tok-123"' in message.model_dump_json(context={REVEAL_TOKEN: True})
    assert "tok-123" in _lines()[2]
    assert kit_messages().validate_json(_lines()[2]).endpoint.token.get_secret_value() == "tok-123"


def test_the_generated_schema_accepts_the_kits_lines_and_good_replies() -> None:
    jsonschema = pytest.importorskip("jsonschema", reason="jsonschema is in the 'test' extra")
    schemas = protocol_schemas()
    for line in _lines():
        jsonschema.validate(json.loads(line), schemas["request.schema.json"])
    good = {
        "start": {"seq": 1, "result": {"name": "x", "version": "1", "capabilities": ["labels"]}},
        "quality_score": {"seq": 1, "result": 0.5},
        "prepare": {"seq": 1, "result": None},
        "search": {"seq": 1, "skipped": "no engine"},
        "lookup": {"seq": 1, "error": {"message": "boom", "kind": "Error"}},
    }
    for operation, reply in good.items():
        jsonschema.validate(reply, schemas[f"reply.{operation}.schema.json"])
        reply_adapter(operation).validate_json(json.dumps(reply), strict=True)  # the models agree


@pytest.mark.parametrize(
    ("operation", "reply"),
    [
        ("quality_score", {"seq": 1, "result": "0.5"}),
        ("search", {"seq": 1, "result": {"hits": [{"docId": "d"}]}}),
        ("start", {"seq": 1, "result": {"name": "x", "version": "1", "capabilities": ["teleport"]}}),
        ("prepare", {"seq": 1}),
        ("search", {"seq": 1, "result": {"hits": []}, "error": {"message": "boom"}}),
        ("search", {"seq": 1, "skipped": "no engine", "result": {"hits": []}}),
        ("quality_score", {"seq": 1, "error": {"message": "boom"}, "skipped": "no"}),
    ],
)
def test_schema_and_models_both_reject_bad_replies(operation: str, reply: dict) -> None:
    jsonschema = pytest.importorskip("jsonschema", reason="jsonschema is in the 'test' extra")
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(reply, protocol_schemas()[f"reply.{operation}.schema.json"])
    with pytest.raises(ValidationError):
        reply_adapter(operation).validate_json(json.dumps(reply), strict=True)


@pytest.mark.parametrize(
    ("operation", "reply"),
    [
        ("search", {"seq": 1, "result": {"hits": []}, "elapsedMs": 3}),
        ("quality_score", {"seq": 1, "result": 0.5, "trace": {"id": "a"}}),
        ("search", {"seq": 1, "skipped": "no engine", "elapsedMs": 3}),
        ("lookup", {"seq": 1, "error": {"message": "boom", "retryable": False}, "elapsedMs": 3}),
        ("stop", {"seq": 1, "result": None, "bye": True}),
    ],
)
def test_schema_and_models_both_accept_fields_the_protocol_does_not_define(
    operation: str, reply: dict
) -> None:
    """The page: fields the protocol does not define, in result or beside it, are kept, never failed."""
    jsonschema = pytest.importorskip("jsonschema", reason="jsonschema is in the 'test' extra")
    jsonschema.validate(reply, protocol_schemas()[f"reply.{operation}.schema.json"])
    reply_adapter(operation).validate_json(json.dumps(reply), strict=True)


def test_cli_writes_the_schema_files(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["schema", "--out", str(tmp_path)]) == 0
    written = sorted(p.name for p in tmp_path.iterdir())
    assert written == sorted(protocol_schemas())
    request = json.loads((tmp_path / "request.schema.json").read_text())
    assert request["$schema"].endswith("2020-12/schema")
    assert main(["schema"]) == 0
    assert "reply.search.schema.json" in json.loads(capsys.readouterr().out.split("\n", len(written))[-1])


@pytest.mark.parametrize(
    "capabilities",
    [
        ["labels", "quality", "post_process", "search", "lookup"],  # as programs written before modes
        ["search:dense", "lookup:dense"],  # one mode only
        ["search:hybrid", "lookup", "labels"],
    ],
)
def test_the_handshake_may_declare_capabilities_per_search_mode(capabilities: list[str]) -> None:
    jsonschema = pytest.importorskip("jsonschema", reason="jsonschema is in the 'test' extra")
    reply = {"seq": 1, "result": {"name": "x", "version": "1", "capabilities": capabilities}}
    jsonschema.validate(reply, protocol_schemas()["reply.start.schema.json"])
    info = reply_adapter("start").validate_json(json.dumps(reply)).result
    assert {str(c) for c in info.capabilities} == set(capabilities)


# -- the schema and the kit's reader agree on every reply line ----------------------------------------

_BLOCK = '{"evidenceKey":"d#0","docId":"d","chunkIndex":0,"originalRank":1,"qualityScore":1.0,' + (
    '"scoreLabel":"hybrid"}'
)
_HIT = '{"docId":"d","chunkIndex":0,"originalRank":1,"score":0.03,"scoreLabel":"hybrid"}'
_INFO = '"name":"x","version":"1"'
_POST = '"blocks":[' + _BLOCK + '],"relevanceLevel":"PRECISE","topQualityScore":1.0'


def _post(old: str, new: str) -> str:
    """A post_process reply whose one block has ``old`` replaced by ``new``."""
    return '{"seq": 1, "result": {' + _POST.replace(old, new) + ',"isLowQuality":false}}'


def _hits(old: str, new: str) -> str:
    """A search reply whose one hit has ``old`` replaced by ``new``."""
    return '{"seq": 1, "result": {"hits": [' + _HIT.replace(old, new) + "]}}"


AGREEMENT = [
    ("stop", '{"seq": 1}'),
    ("stop", '{"seq": 1, "result": null}'),
    ("stop", '{"seq": 1, "result": {}}'),
    ("prepare", '{"seq": 1}'),
    ("prepare", '{"seq": 1, "result": null}'),
    ("quality_score", '{"seq": 1, "result": 0.5}'),
    ("quality_score", '{"seq": 1, "result": 1}'),
    ("quality_score", '{"seq": 1.0, "result": 0.5}'),
    ("quality_score", '{"seq": true, "result": 0.5}'),
    ("quality_score", '{"seq": "1", "result": 0.5}'),
    ("quality_score", '{"result": 0.5}'),
    ("quality_score", '{"seq": 1, "result": "0.5"}'),
    ("quality_score", '{"seq": 1, "result": true}'),
    ("quality_score", '{"seq": 1, "result": null}'),
    ("quality_score", '{"seq": 1, "result": NaN}'),
    ("quality_score", '{"seq": 1, "result": Infinity}'),
    ("quality_score", '{"seq": 1, "result": 1e999}'),
    ("quality_score", '{"seq": 1, "result": 0.5, "extra": 1}'),
    ("quality_score", '{"seq": 1, "skipped": "not in this build"}'),
    ("quality_score", '{"seq": 1, "skipped": ""}'),
    ("quality_score", '{"seq": 1, "skipped": "no", "result": 0.5}'),
    ("quality_score", '{"seq": 1, "error": {"message": "boom"}}'),
    ("quality_score", '{"seq": 1, "error": {"message": "boom", "kind": null, "context": null}}'),
    ("quality_score", '{"seq": 1, "error": {"kind": "ValueError"}}'),
    ("quality_score", '{"seq": 1, "error": {"message": "boom", "trace": "t"}}'),
    ("quality_score", '{"seq": 1, "error": "boom"}'),
    ("canonicalize_label", '{"seq": 1, "result": "hybrid"}'),
    ("canonicalize_label", '{"seq": 1, "result": 1}'),
    ("start", '{"seq": 1, "result": {' + _INFO + ',"capabilities":["labels"]}}'),
    ("start", '{"seq": 1, "result": {' + _INFO + ',"capabilities":["labels","labels"]}}'),
    ("start", '{"seq": 1, "result": {' + _INFO + ',"capabilities":[]}}'),
    ("start", '{"seq": 1, "result": {' + _INFO + "}}"),
    ("start", '{"seq": 1, "result": {' + _INFO + ',"capabilities":["labels"],"language":null}}'),
    ("start", '{"seq": 1, "result": {' + _INFO + ',"capabilities":["labels"],"vendor":{"a":1}}}'),
    ("start", '{"seq": 1, "result": {"name":"x","capabilities":["labels"]}}'),
    ("start", '{"seq": 1, "skipped": "later"}'),
    ("post_process", '{"seq": 1, "result": {' + _POST + ',"isLowQuality":false}}'),
    ("post_process", '{"seq": 1, "result": {' + _POST + ',"isLowQuality":"false"}}'),
    ("post_process", '{"seq": 1, "result": {' + _POST + ',"isLowQuality":0}}'),
    ("post_process", '{"seq": 1, "result": {' + _POST + ',"isLowQuality":null}}'),
    ("post_process", '{"seq": 1, "result": {' + _POST + "}}"),
    ("post_process", '{"seq": 1, "result": {' + _POST + ',"isLowQuality":false,"completeness":"FULL"}}'),
    ("post_process", '{"seq": 1, "result": {"blocks":[],"relevanceLevel":"NONE","isLowQuality":true}}'),
    ("post_process", _post('"chunkIndex":0', '"chunkIndex":0.0')),
    ("post_process", _post('"chunkIndex":0', '"chunkIndex":0.5')),
    ("post_process", _post('"originalRank":1', '"originalRank":"1"')),
    ("post_process", _post('"qualityScore":1.0', '"qualityScore":null')),
    ("search", '{"seq": 1, "result": {"hits": []}}'),
    ("search", '{"seq": 1, "result": {"hits": [' + _HIT + "]}}"),
    ("search", _hits('"score":0.03', '"score":null')),
    ("search", _hits('"score":0.03', '"score":"0.03"')),
    ("search", _hits('"score":0.03,', "")),
    ("search", _hits('"scoreLabel":"hybrid"', '"scoreLabel":null')),
    ("search", '{"seq": 1, "result": {}}'),
    ("lookup", '{"seq": 1, "result": {' + _POST + ',"isLowQuality":false,"path":"filtered"}}'),
    ("lookup", '{"seq": 1, "result": {' + _POST + ',"isLowQuality":false,"path":"sideways"}}'),
    ("lookup", '{"seq": 1, "result": {' + _POST + ',"isLowQuality":false}}'),
]  # fmt: skip


def _strict_json(line: str) -> object:
    """What a JSON parser that follows RFC 8259 reads: NaN, Infinity and 1e999 are not numbers."""

    def refuse(token: str) -> object:
        raise ValueError(f"{token} is not JSON")

    def number(text: str) -> float:
        value = float(text)
        if value in (float("inf"), float("-inf")):
            raise ValueError(f"{text} is not a number a double can hold")
        return value

    return json.loads(line, parse_constant=refuse, parse_float=number)


@pytest.mark.parametrize(("operation", "line"), AGREEMENT)
def test_the_schema_and_the_kits_reader_agree_on_every_reply_line(operation: str, line: str) -> None:
    jsonschema = pytest.importorskip("jsonschema", reason="jsonschema is in the 'test' extra")
    from conformance.stdio import NotApplicable, RemoteError

    try:
        jsonschema.validate(_strict_json(line), protocol_schemas()[f"reply.{operation}.schema.json"])
        schema_accepts = True
    except (ValueError, jsonschema.ValidationError):
        schema_accepts = False
    try:
        decoded = Codec(validate=False).decode("x", operation, 1, line)
        kit_accepts = True
    except NotApplicable:
        kit_accepts = True
    except InvalidReplyError:
        kit_accepts = False
    else:
        assert decoded is not Codec.STALE
        assert not isinstance(decoded, RemoteError) or '"error"' in line
    assert kit_accepts == schema_accepts, (
        f"the schema {'accepts' if schema_accepts else 'rejects'} {line}, the kit does not"
    )


def test_the_request_schema_says_every_field_is_always_sent_with_nulls_where_absent() -> None:
    request = protocol_schemas()["request.schema.json"]["$defs"]
    quality = request["QualityRequest"]
    assert set(quality["required"]) == set(quality["properties"])  # denseDistance: null included
    line = json.loads(
        Codec(validate=True).encode("quality_score", 1, {"request": QualityRequest(score_label="dense")})
    )
    assert line["request"]["score"] is None
    assert line["request"]["denseDistance"] is None
    assert set(line["request"]) == set(quality["properties"])

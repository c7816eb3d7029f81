"""A stdio implementation miniature with one switchable fault, for the stdio tests."""

TOKEN = "s3cret-token-do-not-print"

# One miniature: answers labels correctly; on quality_score it does whatever FAULT says. STATE is a file
# it appends to: one line per prepare (saying whether the token arrived intact) and one per start.
# Faults of the whole wire: handshake-extra (a field the protocol does not define in the start reply),
# gson-nulls (every null dropped, so stop and prepare replies lack their result), elapsed (an elapsedMs
# beside every result), bom (a UTF-8 byte-order mark before the start reply).
TEMPLATE = """\
import json, os, sys, time
FAULT = {fault!r}
STATE = {state!r}
def note(text):
    with open(STATE, "a") as f:
        f.write(text + "\\n")
for line in sys.stdin:
    m = json.loads(line)
    seq, kind = m["seq"], m["type"]
    out = {{"seq": seq, "result": None}}
    if kind == "start":
        note("start")
        starts = sum(1 for entry in open(STATE) if entry == "start\\n")
        if FAULT == "banner" or (FAULT == "crash-then-banner" and starts > 1):
            print("my-impl v1 ready")
        caps = ["labels", "quality", "search"]
        out["result"] = {{"name": "mini", "version": "1", "capabilities": caps}}
        if FAULT == "handshake-extra":
            out["result"]["vendor"] = {{"team": "acme", "build": 7}}
    elif kind == "canonicalize_label":
        out["result"] = {{"rrf_fused": "hybrid"}}.get(m["label"], "dense")
    elif kind == "prepare":
        note("prepare token-ok" if m["endpoint"]["token"] == {token!r} else "prepare bad")
    elif kind == "search":
        out["result"] = {{"hits": []}}
    elif kind == "quality_score":
        if FAULT in ("crash", "crash-then-banner"):
            print("about to fail, token", m.get("token", {token!r}), file=sys.stderr, flush=True)
            os._exit(3)
        if FAULT == "hang":
            time.sleep(3600)
        if FAULT == "garbage":
            print("this is not json", flush=True)
            continue
        if FAULT == "flood":
            for i in range(300):
                print("progress", i, flush=True)
            continue
        if FAULT == "noise":
            print("computing quality...", flush=True)
        if FAULT == "latin1-log":
            sys.stdout.buffer.write("qualit\\xe9 calcul\\xe9e".encode("latin-1") + b"\\n")
            sys.stdout.flush()
        if FAULT == "latin1-reply":
            reply = '{{"seq": %d, "error": {{"message": "caf\\xe9"}}}}' % seq
            sys.stdout.buffer.write(reply.encode("latin-1") + b"\\n")
            sys.stdout.flush()
            continue
        if FAULT == "huge":
            print('{{"seq": %d, "result": 1e999}}' % seq, flush=True)
            continue
        if FAULT == "invalid":
            out["result"] = {{"quality": 0.5}}
        elif FAULT == "nan":
            out["result"] = float("nan")  # json.dumps writes a bare NaN, as Gson does
        elif FAULT == "infinity":
            out["result"] = -float("inf")
        elif FAULT == "string-number":
            out["result"] = "0.5"
        elif FAULT == "ahead":
            out = {{"seq": seq + 1, "result": 0.5}}
        elif FAULT == "noseq":
            out = {{"result": 0.5}}
        elif FAULT == "skip":
            out = {{"seq": seq, "skipped": "no normalizer in this build"}}
        elif FAULT == "error":
            out = {{"seq": seq, "error": {{"message": "bad label", "kind": "ValueError"}}}}
        else:
            if FAULT == "slow":
                time.sleep(0.5)
            out["result"] = 0.5
    if FAULT == "gson-nulls":  # a JSON library that drops nulls: {{"seq": n}} for stop and prepare
        out = {{k: v for k, v in out.items() if v is not None}}
    if FAULT == "elapsed":  # a field the protocol does not define, beside every result
        out["elapsedMs"] = 3
    if FAULT == "bom" and kind == "start":  # .NET's default UTF-8 writer: a byte-order mark first
        sys.stdout.write("\ufeff")
    print(json.dumps(out), flush=True)
    if kind == "stop":
        break
"""

# The Python stdio example with one thing changed, for whole runs: MODE is the first argument.
#   invalid-post-process: every post_process reply carries a text where isLowQuality's boolean belongs
#                         (and an extra "completeness" field, which alone is fine);
#   noise:                a log line on stdout before every reply after the handshake.
EXAMPLE_VARIANT = """\
import importlib.util, json, sys
spec = importlib.util.spec_from_file_location("impl", {example!r})
impl = importlib.util.module_from_spec(spec)
spec.loader.exec_module(impl)
MODE = sys.argv[1]
original_post_process, original_answer = impl.post_process, impl.answer
def post_process(request):
    reply = original_post_process(request)
    reply["completeness"] = "PARTIAL"
    if MODE == "invalid-post-process":
        reply["isLowQuality"] = "perhaps"
    return reply
def answer(message):
    if MODE == "noise" and message["type"] != "start":
        print("handling", message["type"], flush=True)
    return original_answer(message)
impl.post_process, impl.answer = post_process, answer
impl.main()
"""

"""A stdio implementation miniature with one switchable fault, for the stdio tests."""

TOKEN = "s3cret-token-do-not-print"

# One miniature: answers labels correctly; on quality_score it does whatever FAULT says.
TEMPLATE = """\
import json, os, sys, time
FAULT = {fault!r}
STATE = {state!r}
for line in sys.stdin:
    m = json.loads(line)
    seq, kind = m["seq"], m["type"]
    out = {{"seq": seq, "result": None}}
    if kind == "start":
        if FAULT == "banner":
            print("my-impl v1 ready")
        caps = ["labels", "quality", "search"]
        out["result"] = {{"name": "mini", "version": "1", "capabilities": caps}}
    elif kind == "canonicalize_label":
        out["result"] = {{"rrf_fused": "hybrid"}}.get(m["label"], "dense")
    elif kind == "prepare":
        with open(STATE, "a") as f:
            f.write("prepare token-ok\\n" if m["endpoint"]["token"] == {token!r} else "prepare bad\\n")
    elif kind == "search":
        out["result"] = {{"hits": []}}
    elif kind == "quality_score":
        if FAULT == "crash":
            print("about to fail, token", m.get("token", {token!r}), file=sys.stderr, flush=True)
            os._exit(3)
        if FAULT == "hang":
            time.sleep(3600)
        if FAULT == "garbage":
            print("this is not json", flush=True)
            continue
        if FAULT == "invalid":
            out["result"] = {{"quality": 0.5}}
        elif FAULT == "string-number":
            out["result"] = "0.5"
        elif FAULT == "skip":
            out = {{"seq": seq, "skipped": "no normalizer in this build"}}
        elif FAULT == "error":
            out = {{"seq": seq, "error": {{"message": "bad label", "kind": "ValueError"}}}}
        else:
            if FAULT == "slow":
                time.sleep(0.5)
            out["result"] = 0.5
    print(json.dumps(out), flush=True)
    if kind == "stop":
        break
"""

"""The smallest stdio implementation: it answers ``start``, ``canonicalize_label`` and ``stop``.

Standard library only, as a third party would write it. The benchmark times the kit's round trips to
it, so this program does as little as possible per message: parse, look up, print, flush.
"""

import json
import sys

LABELS = {"dense": "dense", "hybrid": "hybrid", "l2_distance": "dense", "rrf_fused": "hybrid"}
LABELS["bm25_only_no_dense"] = "hybrid"


def main() -> None:
    """One reply line per request line until ``stop`` or end of input."""
    for line in sys.stdin:
        message = json.loads(line)
        kind, reply = message["type"], {"seq": message["seq"], "result": None}
        if kind == "start":
            reply["result"] = {"name": "tiny-stdio", "version": "1", "capabilities": ["labels"]}
        elif kind == "canonicalize_label":
            reply["result"] = LABELS[message["label"]]
        sys.stdout.write(json.dumps(reply) + "\n")
        sys.stdout.flush()
        if kind == "stop":
            return


if __name__ == "__main__":
    main()

#!/usr/bin/python3
"""``milvus run standalone`` for the rag-conformance Milvus 2.3.5 image.

testcontainers' ``MilvusContainer`` runs this command with ``ETCD_USE_EMBED=true``,
``COMMON_STORAGETYPE=local`` and ``ETCD_DATA_DIR``, then waits for "Welcome to use Milvus!" on the
container's output and for ``GET /healthz`` on port 9091. The PyPI server (``milvus-server``) writes its
logs to files and prints nothing while it starts, so this program starts it, copies its log to stdout
(``docker logs`` then shows why a start failed), polls /healthz and prints the welcome line once it
answers OK. SIGTERM and SIGINT stop the server (SIGINT is the signal ``milvus-server`` handles).
"""

import os
import signal
import subprocess
import sys
import threading
import time
import urllib.request
from pathlib import Path

DATA = Path("/var/lib/milvus")
SERVER = "/opt/milvus/bin/milvus-server"
HEALTH = "http://127.0.0.1:9091/healthz"
WELCOME = "Welcome to use Milvus!"
# The only etcd and storage this server has: refuse, saying so, a setting asking for another.
SUPPORTED = {"ETCD_USE_EMBED": "true", "COMMON_STORAGETYPE": "local"}


def main(argv):
    if argv != ["run", "standalone"]:
        print(f"this image runs one command, `milvus run standalone`; got `milvus {' '.join(argv)}`")
        return 2
    for name, value in SUPPORTED.items():
        given = os.environ.get(name)
        if given is not None and given.lower() != value:
            print(f"{name}={given} is not supported here: this Milvus 2.3.5 has {name}={value} only")
            return 2
    command = [SERVER, "--data", str(DATA), "--proxy-port", "19530", "--extra-config", "proxy.ip=0.0.0.0"]
    server = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.STDOUT)

    def stop(_signum, _frame):
        if server.poll() is None:
            server.send_signal(signal.SIGINT)

    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGINT, stop)
    threading.Thread(target=follow, args=(DATA / "logs" / "milvus-stdout.log", server), daemon=True).start()
    while server.poll() is None:
        try:
            with urllib.request.urlopen(HEALTH, timeout=2) as reply:
                if b"OK" in reply.read():
                    print(WELCOME, flush=True)
                    break
        except OSError:  # not listening yet, or not healthy yet
            pass
        time.sleep(0.5)
    code = server.wait()
    print(f"milvus-server exited with code {code}", flush=True)
    return code


def follow(path, server):
    """Copy ``path`` to stdout as it grows, until the server exits."""
    while not path.exists() and server.poll() is None:
        time.sleep(0.2)
    with path.open("rb") as log:
        while True:
            chunk = log.read(65536)
            if chunk:
                sys.stdout.buffer.write(chunk)
                sys.stdout.flush()
            elif server.poll() is not None:
                return
            else:
                time.sleep(0.2)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

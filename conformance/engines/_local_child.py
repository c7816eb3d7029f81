"""Child process that runs one cached local engine for ``rag-conformance engines``, run by path.

``python -P _local_child.py exec -- CMD...`` runs a server command (Milvus 2.3.5's ``milvus-server``).
``python -P _local_child.py lite-core --port P --data-dir D`` runs a Milvus Lite 2.x C++ server binary
(2.4.12, 2.5.1) on ``D/lite.db`` and a private loopback port and, on ``127.0.0.1:P``, a raw-bytes gRPC
forwarder in front of it. Lite 2.x does not implement ``GetVersion`` (UNIMPLEMENTED), which every
Milvus client of the kit calls
first; the forwarder answers it with ``milvus_lite-<installed package version>`` and passes every other
call through unchanged.

It needs only the stdlib (and grpcio for ``lite-core``), because it runs with the interpreter of the
engine's own cached venv; the kit's port checks (``_ports.py``, standard library only too) are loaded by
their path. The parent holds this process's stdin open and never writes: when the
parent dies for any reason, the read hits EOF and the engine is stopped, so no server is orphaned.
"""

from __future__ import annotations

import argparse
import contextlib
import importlib.util
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path
from types import ModuleType

HOST = "127.0.0.1"
VERSION_METHOD = "/milvus.proto.milvus.MilvusService/GetVersion"
MAX_CALL_SECONDS = 600.0  # cap on a forwarded call: an unbounded client deadline must not hang it
_MESSAGE_OPTIONS = [("grpc.max_send_message_length", -1), ("grpc.max_receive_message_length", -1)]
_stop = threading.Event()


def _watch_parent() -> None:
    while os.read(0, 4096):  # the parent never writes; EOF means it is gone
        pass
    _stop.set()


def _ports() -> ModuleType:
    """The kit's port checks (``_ports.py``, standard library only), loaded by path: this file runs in
    the engine's venv, where the kit is not installed."""
    spec = importlib.util.spec_from_file_location("_rqs_ports", Path(__file__).with_name("_ports.py"))
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _on_a_private_port(
    start: Callable[[int], subprocess.Popen[bytes]],
) -> tuple[subprocess.Popen[bytes], int]:
    """The engine binary on a port found free, once it holds it. Another process can take that port
    before the binary binds it; until the binary fails, the port answers as that process, and the
    forwarder would pass the kit's calls to it. Such a port is given up for another free one."""
    ports = _ports()
    for _ in range(ports.START_ATTEMPTS):
        inner = ports.free_port()
        proc = start(inner)
        while proc.poll() is None and not _stop.is_set():
            if ports.port_open(inner):
                if ports.served_by(proc.pid, inner) is not False:
                    return proc, inner  # the binary's own (or this machine cannot tell)
                print(f"the engine's private port {inner} was taken by another process", file=sys.stderr)
                break
            time.sleep(0.05)
        else:
            return proc, inner  # it exited (its log says why), or the child is stopping
        _terminate(proc, grace=5.0)
    return proc, inner


def _terminate(proc: subprocess.Popen[bytes], grace: float) -> None:
    if proc.poll() is None:
        proc.terminate()
        try:
            proc.wait(grace)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def _wait(proc: subprocess.Popen[bytes]) -> int:
    while not _stop.is_set() and proc.poll() is None:
        time.sleep(0.2)
    code = proc.poll()
    return 0 if code is None else code


def run_exec(command: list[str]) -> int:
    """Run ``command`` until it exits or the parent goes away; then stop it and everything it started."""
    proc = subprocess.Popen(command)
    try:
        return _wait(proc)
    finally:
        _stop_group(proc, grace=15.0)


def _stop_group(proc: subprocess.Popen[bytes], grace: float) -> None:
    # milvus-server (Python) starts the Go binary as its own child and does not stop it when told to
    # stop: a parent that died left the Go server running. This process leads its own group (the
    # parent starts it in a new session), so the group is exactly the engine: stop all of it.
    group = os.getpgrp()
    if group != os.getpid():  # run by hand, not as a group leader: stop only what we started
        _terminate(proc, grace)
        return
    os.killpg(group, signal.SIGTERM)  # our own handler only sets _stop; the Go server flushes, stops
    deadline = time.monotonic() + grace
    with contextlib.suppress(subprocess.TimeoutExpired):
        proc.wait(grace)
    # A clean stop: the Go server (milvus-server's own child) leaves its sessions and flushes before it
    # exits, and the next version started on the same data (an in-place upgrade) depends on that.
    while _others_in_group(group) and time.monotonic() < deadline:
        time.sleep(0.2)
    time.sleep(0.5)
    os.killpg(group, signal.SIGKILL)  # whatever is left, this process included: nothing outlives it


def _others_in_group(group: int) -> bool:
    """Whether a live process other than this one is in process group ``group`` (Linux's /proc)."""
    me = os.getpid()
    for entry in os.listdir("/proc") if os.path.isdir("/proc") else ():
        if not entry.isdigit() or int(entry) == me:
            continue
        try:
            fields = Path(f"/proc/{entry}/stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if fields[0] != "Z" and int(fields[2]) == group:  # state, ppid, pgrp
            return True
    return False


def _version_reply() -> bytes:
    from importlib.metadata import version

    # GetVersionResponse{version = 2}: a length-delimited field, tag (2 << 3) | 2; the status is empty.
    text = f"milvus_lite-{version('milvus-lite')}".encode()
    return b"\x12" + _varint(len(text)) + text


def _varint(value: int) -> bytes:
    out = bytearray()
    while True:
        byte, value = value & 0x7F, value >> 7
        out.append(byte | (0x80 if value else 0))
        if not value:
            return bytes(out)


def run_lite25(port: int, data_dir: Path, *, direct: bool = False) -> int:
    """Serve Lite 2.x on ``127.0.0.1:port`` through the GetVersion-answering forwarder.

    ``direct``: the binary itself listens on ``port`` (no forwarder, no ``GetVersion``), for
    measurements where a forwarder's hop would be counted as the engine's time.
    """
    from concurrent import futures

    import grpc
    import milvus_lite

    lib = Path(milvus_lite.__file__).resolve().parent / "lib"
    data_dir.mkdir(parents=True, exist_ok=True)
    env = {**os.environ, "LD_LIBRARY_PATH": f"{lib}:{os.environ.get('LD_LIBRARY_PATH', '')}"}

    def binary(on: int) -> subprocess.Popen[bytes]:
        # In address mode the binary serves TCP and needs no lock file (the UDS mode's stop signal).
        command = [str(lib / "milvus"), str(data_dir / "lite.db"), f"{HOST}:{on}", "ERROR"]
        return subprocess.Popen(command, env=env, cwd=str(data_dir))

    if direct:  # the kit checks that what answers on its port is this process's own
        proc = binary(port)
        try:
            return _wait(proc)
        finally:
            _terminate(proc, grace=5.0)
    proc, inner = _on_a_private_port(binary)
    if proc.poll() is not None:
        return _wait(proc)
    channel = grpc.insecure_channel(f"{HOST}:{inner}", options=_MESSAGE_OPTIONS)
    reply = _version_reply()

    class Forward(grpc.GenericRpcHandler):
        def service(self, details: grpc.HandlerCallDetails) -> grpc.RpcMethodHandler:
            method = details.method
            if method == VERSION_METHOD:
                return grpc.unary_unary_rpc_method_handler(lambda _request, _context: reply)
            call = channel.unary_unary(method)  # no (de)serializers: bytes in, bytes out

            def forward(request: bytes, context: grpc.ServicerContext) -> bytes:
                remaining = context.time_remaining()
                timeout = min(remaining, MAX_CALL_SECONDS) if remaining else MAX_CALL_SECONDS
                metadata = [(k, v) for k, v in context.invocation_metadata() if k != "user-agent"]
                try:
                    return call(request, timeout=timeout, metadata=metadata)
                except grpc.RpcError as exc:  # pass the engine's own status through
                    context.abort(exc.code(), exc.details() or "")
                    raise  # unreachable: abort raises

            return grpc.unary_unary_rpc_method_handler(forward)

    server = grpc.server(futures.ThreadPoolExecutor(max_workers=8), options=_MESSAGE_OPTIONS)
    server.add_generic_rpc_handlers((Forward(),))
    server.add_insecure_port(f"{HOST}:{port}")
    server.start()
    try:
        return _wait(proc)
    finally:
        server.stop(grace=1.0)
        _terminate(proc, grace=5.0)


def main(argv: list[str] | None = None) -> int:
    """Parse the mode, start the parent watchdog, run the engine until told to stop."""
    parser = argparse.ArgumentParser(prog="_local_child.py")
    sub = parser.add_subparsers(dest="mode", required=True)
    exec_ = sub.add_parser("exec")
    exec_.add_argument("command", nargs=argparse.REMAINDER)
    lite = sub.add_parser("lite-core", aliases=["lite25"])
    lite.add_argument("--port", type=int, required=True)
    lite.add_argument("--data-dir", type=Path, required=True)
    lite.add_argument("--direct", action="store_true", help="no forwarder (and so no GetVersion)")
    args = parser.parse_args(argv)
    # SIGTERM from the parent: leave the wait loop and stop the engine through the finally blocks.
    signal.signal(signal.SIGTERM, lambda _signum, _frame: _stop.set())
    threading.Thread(target=_watch_parent, daemon=True).start()
    if args.mode == "exec":
        command = args.command[1:] if args.command[:1] == ["--"] else args.command
        return run_exec(command)
    return run_lite25(args.port, args.data_dir, direct=args.direct)


if __name__ == "__main__":
    sys.exit(main())

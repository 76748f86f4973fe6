"""Bulk sender and sink run inside the test namespaces (``ip netns exec NS python traffic.py``).

Both ends select the congestion control with setsockopt(TCP_CONGESTION) on the listening or
connecting socket (for MPTCP every subflow inherits it), read it back with getsockopt and print
one JSON line with what they saw.
"""

from __future__ import annotations

import argparse
import json
import socket
import sys
import time

CHUNK_BYTES = 64 * 1024


def _proto(name: str) -> int:
    return socket.IPPROTO_MPTCP if name == "mptcp" else socket.IPPROTO_TCP


def _set_cc(sock: socket.socket, cc: str) -> None:
    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_CONGESTION, cc.encode())


def _get_cc(sock: socket.socket) -> str:
    raw = sock.getsockopt(socket.IPPROTO_TCP, socket.TCP_CONGESTION, 16)
    return raw.split(b"\0", 1)[0].decode()


def serve(args: argparse.Namespace) -> dict[str, object]:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM, _proto(args.proto)) as lsock:
        lsock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        _set_cc(lsock, args.cc)
        lsock.bind((args.bind, args.port))
        lsock.listen(1)
        print(json.dumps({"listening": True}), flush=True)
        lsock.settimeout(args.timeout_s)
        conn, _ = lsock.accept()
        with conn:
            conn.settimeout(args.timeout_s)
            received = 0
            while True:
                data = conn.recv(CHUNK_BYTES)
                if not data:
                    break
                received += len(data)
            return {"received_bytes": received, "cc": _get_cc(conn)}


def send(args: argparse.Namespace) -> dict[str, object]:
    payload = b"\x5a" * CHUNK_BYTES
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM, _proto(args.proto)) as sock:
        _set_cc(sock, args.cc)
        sock.settimeout(args.timeout_s)
        sock.connect((args.dst, args.port))
        # Give additional subflows time to join before the bulk transfer starts.
        time.sleep(args.settle_s)
        sent = 0
        while sent < args.bytes:
            sent += sock.send(payload[: min(CHUNK_BYTES, args.bytes - sent)])
        sock.shutdown(socket.SHUT_WR)
        sock.recv(1)
        return {"sent_bytes": sent, "cc": _get_cc(sock)}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("role", choices=["serve", "send"])
    parser.add_argument("--proto", choices=["mptcp", "tcp"], required=True)
    parser.add_argument("--cc", required=True)
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--bind", default="0.0.0.0")
    parser.add_argument("--dst", default="")
    parser.add_argument("--bytes", type=int, default=0)
    parser.add_argument("--settle-s", type=float, default=0.0)
    parser.add_argument("--timeout-s", type=float, default=30.0)
    args = parser.parse_args()
    result = serve(args) if args.role == "serve" else send(args)
    print(json.dumps(result), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())

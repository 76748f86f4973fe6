"""What a perf client and server say around the data.

1. The client sends one JSON line, the hello: how long to measure and, for blocks, their size.
2. The server answers at once with one line holding its CLOCK_MONOTONIC reading and its boot
   id; for blocks, the client sends :data:`SYNC_ROUNDS` − 1 more lines, each answered with a
   reading. So
   that block latencies can be taken between two hosts' clocks, the client takes its clock's
   offset from the server's as the reading of the shortest round trip less that trip's middle
   (NTP's estimate, off by at most half that trip, by the paths' asymmetry). Two ends with the
   same boot id share one clock (network namespaces of one host): the offset is then 0.
3. The client sends as fast as it can. The server measures from the first data byte it reads
   for the time asked, answers with one JSON line (what it received, over how long, when each
   block was complete) and shuts its sending side.
4. The client, once it has the answer, aborts the connection so that what still sits in its
   send buffer is not delivered into the next transfer.

A hello longer than :data:`MAX_LINE` is not ours.
"""

from __future__ import annotations

import json
from typing import Any

MAGIC = "mptcplab-perf"
VERSION = 1
MAX_LINE = 4096
DEFAULT_PORT = 5301
#: Longest measurement a server accepts, seconds.
MAX_DURATION_S = 3600.0
#: Clock readings the client asks for before sending data.
SYNC_ROUNDS = 8
#: Smallest block, bytes: every block is timed and listed in the answer and the record, so a
#: tiny block over a fast path makes tens of millions of them for a latency that is the same
#: as a segment's.
MIN_BLOCK_BYTES = 1024
#: Largest block, bytes.
MAX_BLOCK_BYTES = 1 << 30


class WireError(Exception):
    """The peer did not speak this protocol."""


def encode(data: dict[str, Any]) -> bytes:
    return (json.dumps(data) + "\n").encode()


def hello(duration_s: float, block_bytes: int | None = None) -> bytes:
    return encode(
        {
            "magic": MAGIC,
            "version": VERSION,
            "duration_s": duration_s,
            "block_bytes": block_bytes,
            "sync_rounds": sync_rounds(block_bytes),
        }
    )


def sync_rounds(block_bytes: int | None) -> int:
    """Clock readings a transfer takes: several for blocks, whose latencies need the offset;
    one (the ready line) otherwise."""
    return SYNC_ROUNDS if block_bytes is not None else 1


def _number(value: object) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def parse_hello(line: bytes) -> dict[str, Any]:
    try:
        data = json.loads(line)
    except (UnicodeDecodeError, json.JSONDecodeError):
        raise WireError("the first line is not JSON") from None
    if not isinstance(data, dict) or data.get("magic") != MAGIC:
        raise WireError("the first line is not a mptcplab perf hello")
    if data.get("version") != VERSION:
        raise WireError(f"protocol version {data.get('version')!r}, this end speaks {VERSION}")
    duration = data.get("duration_s")
    if not _number(duration) or not 0 < duration <= MAX_DURATION_S:
        raise WireError(f"duration_s {duration!r}: expected seconds in (0, {MAX_DURATION_S:g}]")
    block = data.get("block_bytes")
    if block is not None and (
        not isinstance(block, int)
        or isinstance(block, bool)
        or not MIN_BLOCK_BYTES <= block <= MAX_BLOCK_BYTES
    ):
        raise WireError(
            f"block_bytes {block!r}: expected bytes in [{MIN_BLOCK_BYTES}, {MAX_BLOCK_BYTES}]"
        )
    rounds = data.get("sync_rounds")
    if not isinstance(rounds, int) or isinstance(rounds, bool) or not 1 <= rounds <= SYNC_ROUNDS:
        raise WireError(f"sync_rounds {rounds!r}: expected 1 to {SYNC_ROUNDS}")
    return data


def split_line(buffer: bytes, limit: int | None = MAX_LINE) -> tuple[bytes, bytes] | None:
    """``(line, rest)`` once ``buffer`` holds a whole line, else None; raises when the line
    grows past ``limit`` without ending."""
    end = buffer.find(b"\n")
    if end < 0:
        if limit is not None and len(buffer) > limit:
            raise WireError(f"no line end within {limit} bytes")
        return None
    return buffer[:end], buffer[end + 1 :]


SYNC = b"sync\n"


def clock(server_ns: int, boot_id: str) -> bytes:
    return encode({"server_ns": server_ns, "boot_id": boot_id})


def parse_clock(line: bytes) -> tuple[int, str]:
    data = parse_answer(line)
    value, boot_id = data.get("server_ns"), data.get("boot_id")
    if not isinstance(value, int) or isinstance(value, bool) or not isinstance(boot_id, str):
        raise WireError("the server's clock line has no clock reading")
    return value, boot_id


def boot_id() -> str:
    """This host's boot id: CLOCK_MONOTONIC is one clock for everything that shares it."""
    try:
        with open("/proc/sys/kernel/random/boot_id") as f:
            return f.read().strip()
    except OSError:
        return ""


def parse_answer(line: bytes) -> dict[str, Any]:
    try:
        data = json.loads(line)
    except (UnicodeDecodeError, json.JSONDecodeError):
        raise WireError("the server's answer is not JSON") from None
    if not isinstance(data, dict):
        raise WireError("the server's answer is not a JSON object")
    if "error" in data:
        raise WireError(f"the server reports: {data['error']}")
    return data

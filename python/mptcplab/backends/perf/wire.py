"""What a perf client and server say around the data.

The client opens with one JSON line, the hello, naming how long to measure, then sends as fast
as it can. The server measures from the first byte it reads for that long, answers with one
JSON line (what it received and over how long) and shuts its sending side; the client, once
it has the answer, aborts the connection so that what still sits in its send buffer is not
delivered into the next transfer. A line longer than :data:`MAX_LINE` is not ours.
"""

from __future__ import annotations

import json
from typing import Any

MAGIC = "mptcplab-perf"
VERSION = 1
MAX_LINE = 4096
DEFAULT_PORT = 5301


class WireError(Exception):
    """The peer did not speak this protocol."""


#: Longest measurement a server accepts, seconds.
MAX_DURATION_S = 3600.0


def hello(duration_s: float) -> bytes:
    return encode({"magic": MAGIC, "version": VERSION, "duration_s": duration_s})


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
    if (
        not isinstance(duration, int | float)
        or isinstance(duration, bool)
        or not 0 < duration <= MAX_DURATION_S
    ):
        raise WireError(f"duration_s {duration!r}: expected seconds in (0, {MAX_DURATION_S:g}]")
    return data


def split_line(buffer: bytes) -> tuple[bytes, bytes] | None:
    """``(line, rest)`` once ``buffer`` holds a whole line, else None; raises when the line
    grows past :data:`MAX_LINE` without ending."""
    end = buffer.find(b"\n")
    if end < 0:
        if len(buffer) > MAX_LINE:
            raise WireError(f"no line end within {MAX_LINE} bytes")
        return None
    return buffer[:end], buffer[end + 1 :]


def encode(data: dict[str, Any]) -> bytes:
    return (json.dumps(data) + "\n").encode()


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

"""TCP and MPTCP transfers between real hosts, and the NorNet-style gain matrix (spec §5.3).

    from mptcplab import perf
    server = perf.PerfServer("::", 5301)          # on the receiving host: server.serve_forever()
    record = perf.transfer("192.0.2.7", transport="mptcp", duration_s=30)
    record["goodput_mbps"], record["mptcp"], record["subflows"]
    matrix = perf.gain_matrix(perf.read_records("perf-records.jsonl"))

``transfer`` sends for ``duration_s`` and returns the receiver's count and goodput with what
the kernel made of the socket (MPTCP or a fallback to TCP, subflows, congestion control,
buffers). ``gain_matrix`` gives one row per (source address, destination): mean TCP goodput
bound to that source, mean unbound MPTCP goodput of the same host, ``ln(MPTCP/TCP)`` and the
critical class when MPTCP gets less than 97.5 % of TCP.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from mptcplab.backends.perf.client import transfer
from mptcplab.backends.perf.gain import read_records as _read_records
from mptcplab.backends.perf.matrix import gain_matrix
from mptcplab.backends.perf.server import PerfServer
from mptcplab.backends.perf.sockets import PerfError

__all__ = ["PerfError", "PerfServer", "gain_matrix", "read_records", "transfer"]


def read_records(path: str | Path) -> list[dict[str, Any]]:
    """The records a ``mptcplab perf gain`` series wrote to ``path`` (JSON lines)."""
    return _read_records(Path(path))

"""A perf server on the loopback interface, in a thread, for the tests of this folder."""

from __future__ import annotations

import socket
import threading
from collections.abc import Iterator

import pytest

from mptcplab.backends.perf.server import PerfServer
from mptcplab.backends.perf.sockets import PerfError, stream_socket


@pytest.fixture
def perf_server() -> Iterator[PerfServer]:
    server = PerfServer("::", 0)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield server
    server.shutdown()
    thread.join(timeout=5)


@pytest.fixture(scope="session")
def mptcp_sockets() -> None:
    try:
        stream_socket(socket.AF_INET, "mptcp").close()
    except PerfError as exc:
        pytest.skip(str(exc))

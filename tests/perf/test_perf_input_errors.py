"""Bad input to ``mptcplab perf``: one message naming the option or the file (and line), exit
code 2, before any transfer; never a traceback nor a silently wrong record."""

from __future__ import annotations

import json
import socket
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from perf_cli import mptcplab

from mptcplab.backends.perf import server, sockets, wire
from mptcplab.backends.perf.client import Sent, block_latencies_ms, transfer
from mptcplab.backends.perf.server import PerfServer

HUGE = "99999999999999999999"


def refused(out: subprocess.CompletedProcess[str], *says: str) -> None:
    assert out.returncode == 2, (out.returncode, out.stderr)
    assert "Traceback" not in out.stderr
    for text in says:
        assert text in out.stderr, out.stderr


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def record(transport: str, mbps: float) -> str:
    return json.dumps(
        {"host": "h", "family": 4, "transport": transport, "bind": "a", "source": "a",
         "server": "d", "goodput_mbps": mbps, "mptcp": transport == "mptcp"}
    )  # fmt: skip


@pytest.fixture
def records(tmp_path: Path) -> Path:
    path = tmp_path / "r.jsonl"
    path.write_text(record("tcp", 10.0) + "\n" + record("mptcp", 12.0) + "\n")
    return path


# 1. Buffers larger than the kernel's int.


@pytest.mark.parametrize(
    ("args", "option"),
    [
        (["server", "--rcvbuf", HUGE], "--rcvbuf"),
        (["client", "127.0.0.1", "--sndbuf", HUGE], "--sndbuf"),
        (["gain", "127.0.0.1", "--sndbuf", HUGE], "--sndbuf"),
    ],
)
def test_a_buffer_past_the_kernels_int_is_refused(args: list[str], option: str) -> None:
    refused(mptcplab(*args), f"'{option}'", str(sockets.MAX_BUFFER_BYTES))


def test_the_library_refuses_such_a_buffer_too() -> None:
    with socket.socket() as sock, pytest.raises(ValueError, match="sndbuf: expected bytes"):
        sockets.set_buffers(sock, sndbuf=1 << 40, rcvbuf=None)


# 2. perf gain -o where no records file can be.


def test_gain_names_a_records_file_it_cannot_read_or_write(tmp_path: Path) -> None:
    (tmp_path / "regfile").write_text("x\n")
    (tmp_path / "folder").mkdir()
    (tmp_path / "binary.jsonl").write_bytes(b'{"a"\n\xff\xfe\x00')
    series = ["127.0.0.1", "-n", "1", "-t", "0.1", "-p", str(free_port()), "-o"]
    cases = {
        "/proc/x": "/proc/x: cannot write the perf records",
        "folder": "folder: is a folder, expected a JSON-lines file",
        "regfile/x": "regfile/x: cannot read the perf records: Not a directory",
        "binary.jsonl": "binary.jsonl:2: not a JSON record (not UTF-8 text)",
    }
    for out, says in cases.items():
        refused(mptcplab("gain", *series, out, cwd=tmp_path), says)
    assert (tmp_path / "binary.jsonl").read_bytes() == b'{"a"\n\xff\xfe\x00'


# 3. perf matrix: its inputs and its --png / --csv.


def test_matrix_names_an_input_that_is_a_folder_or_not_text(tmp_path: Path) -> None:
    (tmp_path / "folder").mkdir()
    refused(mptcplab("matrix", "folder", cwd=tmp_path), "folder: is a folder")
    (tmp_path / "b.jsonl").write_bytes(b"\x89PNG\r\n\x1a\n")
    refused(mptcplab("matrix", "b.jsonl", cwd=tmp_path), "b.jsonl:1: not a JSON record")


@pytest.mark.parametrize("option", ["--png", "--csv"])
def test_matrix_names_an_output_it_cannot_write(option: str, records: Path) -> None:
    folder = records.parent
    (folder / "regfile").write_text("x\n")
    (folder / "sub").mkdir()
    what = "the heat map" if option == "--png" else "the matrix CSV"
    for out in ("/proc/x.png", "sub", "regfile/x.png"):
        proc = mptcplab("matrix", str(records), option, out, cwd=folder)
        refused(proc, f"{out}: cannot write {what}")
        assert proc.stdout == "", "refused before the matrix is printed"


def test_matrix_refuses_a_heat_map_without_any_gain(tmp_path: Path) -> None:
    path = tmp_path / "failed.jsonl"
    path.write_text(json.dumps({"transport": "tcp", "server": "d", "error": "refused"}) + "\n")
    refused(mptcplab("matrix", str(path), "--png", str(tmp_path / "m.png")), "--png: no relation")
    assert not (tmp_path / "m.png").exists()


# 4. A congestion control the kernel does not have.


@pytest.mark.parametrize("transport", ["mptcp", "tcp"])
@pytest.mark.parametrize("name", ["bogus", "lia", "x" * 20])
def test_client_refuses_a_congestion_control_this_host_lacks(transport: str, name: str) -> None:
    out = mptcplab("client", "127.0.0.1", "-p", str(free_port()), "-T", transport, "--cc", name)
    refused(out, f"--cc: '{name}' is not available here (available: ")


def test_gain_refuses_it_before_any_transfer(tmp_path: Path) -> None:
    out = tmp_path / "r.jsonl"
    refused(mptcplab("gain", "127.0.0.1", "--cc", "bogus", "-o", str(out)), "--cc: 'bogus'")
    assert not out.exists()


@pytest.mark.usefixtures("mptcp_sockets")
def test_an_mptcp_transfer_runs_the_congestion_control_asked(perf_server: PerfServer) -> None:
    default = Path("/proc/sys/net/ipv4/tcp_congestion_control").read_text().strip()
    others = [n for n in sockets.available_congestion() if n != default]
    if not others:
        pytest.skip("a single congestion control here")
    for name in others:
        made = transfer("127.0.0.1", perf_server.port, duration_s=0.1, congestion=name)
        assert made["congestion"] == name


def test_a_connection_that_ignored_the_name_is_an_error() -> None:
    with socket.socket() as sock:
        with pytest.raises(sockets.PerfError, match="'bogus' was not applied"):
            sockets.check_applied(sock, "bogus")
        sockets.check_applied(sock, sockets.congestion(sock))


# 5. perf gain: what would fail every transfer.


@pytest.mark.parametrize(
    ("args", "says"),
    [
        (["-s", "bogus"], "--source: 'bogus' is not an address of this host"),
        (["-s", "192.0.2.1"], "--source: '192.0.2.1' is not an address of this host"),
        (["-t", "inf"], "--duration: expected seconds in (0, 3600], got inf"),
        (["-t", "nan"], "--duration: expected seconds in (0, 3600], got nan"),
        (["-t", "3601"], "--duration: expected seconds in (0, 3600], got 3601"),
        (["nohost.invalid"], "destination nohost.invalid: no address"),
    ],
)
def test_gain_refuses_before_any_transfer(args: list[str], says: str, tmp_path: Path) -> None:
    out = tmp_path / "r.jsonl"
    refused(mptcplab("gain", "127.0.0.1", *args, "-n", "1", "-o", str(out)), says)
    assert not out.exists()


def test_a_series_whose_every_transfer_failed_ends_in_error(tmp_path: Path) -> None:
    out = tmp_path / "r.jsonl"
    made = mptcplab(
        "gain", "127.0.0.1", "-n", "1", "-t", "0.1", "-p", str(free_port()), "-o", str(out)
    )
    assert made.returncode == 1, made.stderr
    assert "every transfer of this series failed (2)" in made.stderr
    assert len(out.read_text().splitlines()) == 2  # the failures are recorded all the same


# 6. perf gain does not append to a file it cannot read back.


def test_gain_does_not_append_after_a_line_that_is_not_a_record(tmp_path: Path) -> None:
    bad = tmp_path / "bad.jsonl"
    for text, says in [
        ("garbage\n", "bad.jsonl:1: not a JSON record"),
        ('{"transport": "tc', "bad.jsonl:1: not a JSON record (cut short"),
        (record("tcp", 1.0) + '\n{"transport": "tc', "bad.jsonl:2: not a JSON record (cut short"),
    ]:
        bad.write_text(text)
        refused(
            mptcplab("gain", "127.0.0.1", "-n", "1", "-t", "0.1", "-o", "bad.jsonl", cwd=tmp_path),
            says,
        )
        assert bad.read_text() == text
    # The matrix reads what is there, as the line end is missing from that last line only.
    assert mptcplab("matrix", str(bad)).returncode == 0
    bad.write_text("garbage\n")
    refused(mptcplab("matrix", "bad.jsonl", cwd=tmp_path), "bad.jsonl:1: not a JSON record")


# 7. One records file given twice.


def test_matrix_refuses_a_file_given_twice(records: Path) -> None:
    folder = records.parent
    (folder / "sub").mkdir()
    refused(mptcplab("matrix", "r.jsonl", "r.jsonl", cwd=folder), "r.jsonl: given twice")
    refused(
        mptcplab("matrix", "r.jsonl", "sub/../r.jsonl", cwd=folder),
        "sub/../r.jsonl: given twice (also as r.jsonl)",
    )


# 8. Addresses and durations of server and client.


@pytest.mark.parametrize(
    ("args", "says"),
    [
        (["server", "--bind", "bogus"], "--bind: 'bogus' is not an address of this host"),
        (["server", "--bind", "192.0.2.1"], "--bind: '192.0.2.1' is not an address of this host"),
        (["client", "127.0.0.1", "-B", "bogus"], "--bind: 'bogus' is not an address"),
        (["client", "127.0.0.1", "-t", "inf"], "--duration: expected seconds in (0, 3600]"),
        (["client", "127.0.0.1", "-t", "0"], "--duration: expected seconds in (0, 3600], got 0"),
    ],
)
def test_server_and_client_name_the_option(args: list[str], says: str) -> None:
    refused(mptcplab(*args, "-p", str(free_port())), says)


# 9. Blocks: a bound, and post-processing in time linear in the blocks.


def test_blocks_smaller_than_the_bound_are_refused() -> None:
    refused(mptcplab("client", "127.0.0.1", "--blocks", "1", "-t", "0.5"), "'--blocks'", "1024")
    with pytest.raises(wire.WireError, match=r"block_bytes 1: expected bytes in \[1024, "):
        wire.parse_hello(wire.hello(1.0, 1)[:-1])
    with pytest.raises(ValueError, match="block_bytes"):
        transfer("127.0.0.1", free_port(), block_bytes=1)


def test_block_completion_is_the_first_read_that_covers_its_end() -> None:
    read_bytes, read_ns = [3000, 3500, 8000, 20000], [100, 150, 300, 900]
    # Blocks of 1024 ending at 1024 and 2048 (read 0), 3072 (read 1), 4096 … 7168 (read 2),
    # 8192 … 19456 (read 3); the last 544 bytes make no block.
    done = server.blocks_done_ns(read_bytes, read_ns, 1024, first_ns=100)
    assert done == [0, 0, 50, 200, 200, 200, 200] + [800] * 12
    assert server.blocks_done_ns([], [], 1024, first_ns=0) == []
    sent = Sent(call_offsets=[0, 4096, 6000], call_ns=[10_000, 500_000, 700_000])
    # Block 0 starts with the first call, block 1 with the call that wrote block 0's last byte
    # (the next call waited for room: that wait is block 1's), block 2 with the third call,
    # which wrote block 1's last byte.
    got = block_latencies_ms([2_000_000, 3_000_000, 4_000_000], 1_000_000, sent, 4096)
    assert got == [2.99, 3.99, 4.3]


def test_a_block_waits_from_the_write_of_the_previous_one_as_the_simulator_counts() -> None:
    # Calls of 16 KiB at 0 and 100 ms, 8 KiB blocks read at 150, 160, 250 and 260 ms: block 2
    # begins the second call and had waited since block 1 was written, at 0 ms.
    sent = Sent(call_offsets=[0, 16384], call_ns=[0, 100_000_000])
    done = [150_000_000, 160_000_000, 250_000_000, 260_000_000]
    assert block_latencies_ms(done, 0, sent, 8192) == [150.0, 160.0, 250.0, 160.0]


def test_the_vectorised_timing_is_the_per_block_one() -> None:
    rng = np.random.default_rng(7)
    read_bytes = np.cumsum(rng.integers(1, 9000, 500)).tolist()
    read_ns = np.cumsum(rng.integers(1, 10**6, 500)).tolist()
    expected, next_block = [], 1500
    for received, at in zip(read_bytes, read_ns, strict=True):
        while received >= next_block:
            expected.append(at - 5)
            next_block += 1500
    assert server.blocks_done_ns(read_bytes, read_ns, 1500, first_ns=5) == expected
    # The sender's side, block by block: the time of the call that wrote the previous block's
    # last byte (block 0: the first call's), some calls ending exactly on a block boundary.
    sizes = rng.integers(1, 9000, 500)
    sizes[::7] = 1500
    offsets = np.concatenate(([0], np.cumsum(sizes)[:-1])).tolist()
    call_ns = np.cumsum(rng.integers(1, 10**6, 500)).tolist()
    blocks = int(sum(sizes)) // 1500
    starts = []
    for k in range(blocks):
        last = max(k * 1500 - 1, 0)
        starts.append(max(t for o, t in zip(offsets, call_ns, strict=True) if o <= last))
    done = [starts[k] + 1000 * k for k in range(blocks)]
    sent = Sent(call_offsets=offsets, call_ns=call_ns)
    got = block_latencies_ms(done, 0, sent, 1500)
    assert got == pytest.approx([k / 1000 for k in range(blocks)], abs=1e-9)


def test_millions_of_blocks_each_get_their_latency() -> None:
    reads = 50_000
    read_bytes = [64 * 1024 * (i + 1) for i in range(reads)]
    # Call i writes 64 KiB at i µs; read i takes it whole at the same time.
    at_ns = [1000 * i for i in range(reads)]
    done = server.blocks_done_ns(read_bytes, at_ns, 1024, first_ns=0)
    sent = Sent(call_offsets=[0, *read_bytes[:-1]], call_ns=at_ns)
    latencies = block_latencies_ms(done, 0, sent, 1024)
    assert len(latencies) == reads * 64
    # Read i completes blocks 64i … 64i+63; block 64i began with call i − 1, the others with i.
    assert latencies[64 * 7 : 64 * 8] == [0.001] + [0.0] * 63


# 10. Host names that fail before the lookup, and -4/-6 against the addresses given.


@pytest.mark.parametrize(
    ("args", "says"),
    [
        (["client", "127.0.0.1", "-B", "a..b"], "--bind: 'a..b' is not an address of this host"),
        (["server", "--bind", "a..b"], "--bind: 'a..b' is not an address of this host"),
        (["gain", "a..b", "-t", "0.1"], "destination a..b: no address (not a valid host name"),
        (["gain", "127.0.0.1", "-s", "a..b"], "--source: 'a..b' is not an address of this host"),
    ],
)
def test_a_name_with_an_empty_or_long_label_is_refused_by_name(args: list[str], says: str) -> None:
    # Python's IDNA codec refuses such a name before any lookup, with a UnicodeError.
    refused(mptcplab(*args, "-p", str(free_port())), says)


@pytest.mark.parametrize("server", ["10.77.0..2", "x" * 300])
def test_a_client_to_such_a_name_fails_in_one_line(server: str) -> None:
    out = mptcplab("client", server, "-p", str(free_port()), "-t", "0.1")
    assert out.returncode == 1 and "Traceback" not in out.stderr
    assert out.stderr.startswith(f"error: {server}: no address (not a valid host name")


@pytest.mark.parametrize(
    ("args", "says"),
    [
        (["127.0.0.1", "-6"], "destination 127.0.0.1: no IPv6 address"),
        (["::1", "-4"], "destination ::1: no IPv4 address"),
        (["127.0.0.1", "-s", "::1", "-4"], "--source: '::1' is not an IPv4 address"),
    ],
)
def test_gain_refuses_addresses_of_the_other_family_before_any_transfer(
    args: list[str], says: str, tmp_path: Path
) -> None:
    """Every transfer would fail, and recorded as made, the failures would keep a corrected
    rerun from making them."""
    out = tmp_path / "r.jsonl"
    refused(mptcplab("gain", *args, "-n", "1", "-t", "0.1", "-o", str(out)), says)
    assert not out.exists()


# 11. A congestion control that is loaded but not allowed for the process.


def test_a_loaded_congestion_control_the_process_may_not_choose_is_named_so() -> None:
    import os
    import shutil

    proc = Path("/proc/sys/net/ipv4")
    allowed = set((proc / "tcp_allowed_congestion_control").read_text().split())
    loaded = (proc / "tcp_available_congestion_control").read_text().split()
    barred = [name for name in loaded if name not in allowed]
    if os.geteuid() != 0 or shutil.which("setpriv") is None:
        pytest.skip("needs root and setpriv to run a process without CAP_NET_ADMIN")
    if not barred:
        pytest.skip("every loaded congestion control is allowed here")
    script = (
        "import sys\n"
        "from mptcplab.backends.perf.sockets import PerfError, check_congestion\n"
        "try:\n"
        f"    check_congestion({barred[0]!r})\n"
        "except PerfError as exc:\n"
        "    print(exc)\n"
    )
    env = dict(os.environ, PYTHONPATH=str(Path(__file__).resolve().parents[2] / "python"))
    out = subprocess.run(
        ["setpriv", "--inh-caps=-net_admin", "--bounding-set=-net_admin", sys.executable, "-c",
         script],
        capture_output=True, text=True, env=env, timeout=60,
    )  # fmt: skip
    assert out.returncode == 0, out.stderr
    assert f"{barred[0]!r} is loaded but not allowed for this process" in out.stdout
    assert "tcp_allowed_congestion_control" in out.stdout


# 12. Records the matrix could not read.


@pytest.mark.parametrize(
    ("change", "says"),
    [
        ({"goodput_mbps": "fast"}, 'goodput_mbps: expected a finite number >= 0, got "fast"'),
        ({"goodput_mbps": -3}, "goodput_mbps: expected a finite number >= 0, got -3"),
        ({"goodput_mbps": True}, "goodput_mbps: expected a finite number >= 0, got true"),
        ({"source": ["a"]}, 'source: expected text, got ["a"]'),
        ({"family": "x"}, 'family: expected 4 or 6, got "x"'),
        ({"transport": "udp"}, 'transport: expected "tcp" or "mptcp", got "udp"'),
        ({"mptcp": "yes"}, 'mptcp: expected true or false, got "yes"'),
    ],
)
def test_matrix_names_the_field_of_a_record_it_cannot_read(
    change: dict, says: str, tmp_path: Path
) -> None:
    bad = json.loads(record("tcp", 10.0)) | change
    path = tmp_path / "r.jsonl"
    path.write_text(record("mptcp", 12.0) + "\n" + json.dumps(bad) + "\n")
    refused(
        mptcplab("matrix", "r.jsonl", cwd=tmp_path),
        f"r.jsonl:2: not a mptcplab perf record: {says}",
    )

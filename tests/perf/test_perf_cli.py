"""``mptcplab perf``: the client's summary, the matrix from record files, errors as one line."""

from __future__ import annotations

import json
import socket
from pathlib import Path

from perf_cli import mptcplab

from mptcplab.backends.perf.server import PerfServer


def test_client_prints_the_receivers_goodput(perf_server: PerfServer) -> None:
    out = mptcplab("client", "127.0.0.1", "-p", str(perf_server.port), "-T", "tcp", "-t", "0.2")
    assert out.returncode == 0, out.stderr
    assert "goodput Mbit/s" in out.stdout and "transport" in out.stdout


def test_client_json_is_the_record(perf_server: PerfServer) -> None:
    out = mptcplab(
        "client", "127.0.0.1", "-p", str(perf_server.port), "-T", "tcp", "-t", "0.2", "--json"
    )
    record = json.loads(out.stdout)
    assert 0 < record["bytes_received"] <= record["bytes_sent"]


def test_client_error_is_one_line_without_traceback() -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    out = mptcplab("client", "127.0.0.1", "-p", str(port), "-t", "0.1")
    assert out.returncode == 1
    assert out.stderr.startswith("error: cannot connect to [127.0.0.1]")
    assert "Traceback" not in out.stderr


def test_gain_then_matrix_from_the_records(perf_server: PerfServer, tmp_path: Path) -> None:
    records = tmp_path / "h1.jsonl"
    args = ["127.0.0.1", "-s", "127.0.0.1", "-n", "1", "-t", "0.2", "-p", str(perf_server.port)]
    out = mptcplab("gain", *args, "-o", str(records))
    assert out.returncode == 0, out.stderr
    assert "IPv4: MPTCP/TCP gain per relation" in out.stdout
    assert len(records.read_text().splitlines()) == 2
    again = mptcplab("gain", *args, "-o", str(records))
    assert "every transfer is already recorded" in again.stdout
    png, csv = tmp_path / "m.png", tmp_path / "m.csv"
    out = mptcplab("matrix", str(records), "--png", str(png), "--csv", str(csv))
    assert out.returncode == 0, out.stderr
    assert png.read_bytes()[:4] == b"\x89PNG"
    assert csv.read_text().splitlines()[0].startswith("family,host,source,destination")


def test_matrix_names_a_missing_or_foreign_file(tmp_path: Path) -> None:
    out = mptcplab("matrix", str(tmp_path / "none.jsonl"))
    assert out.returncode == 2 and "none.jsonl: no such file" in out.stderr
    foreign = tmp_path / "x.jsonl"
    foreign.write_text('{"a": 1}\n')
    out = mptcplab("matrix", str(foreign))
    assert out.returncode == 2 and "x.jsonl:1: not a mptcplab perf record" in out.stderr


def test_gain_from_a_mesh_names_this_host_in_its_records(
    perf_server: PerfServer, tmp_path: Path
) -> None:
    mesh = tmp_path / "mesh.toml"
    mesh.write_text(
        '[[hosts]]\nname = "here"\naddresses = ["127.0.0.1"]\n\n'
        '[[hosts]]\nname = "there"\naddresses = ["127.0.0.2"]\n'
    )
    records = tmp_path / "r.jsonl"
    series = ["--mesh", str(mesh), "-n", "1", "-t", "0.2", "-p", str(perf_server.port)]
    out = mptcplab("gain", *series, "-o", str(records))
    # Both hosts' addresses are on this machine (127.0.0.0/8): it must be told which it is.
    assert out.returncode == 2 and "which host is this?" in out.stderr
    out = mptcplab("gain", *series, "--host", "here", "-o", str(records))
    assert out.returncode == 0, out.stderr
    made = [json.loads(line) for line in records.read_text().splitlines()]
    assert [(r["host"], r["transport"], r["bind"], r["server"]) for r in made] == [
        ("here", "tcp", "127.0.0.1", "127.0.0.2"),
        ("here", "mptcp", "*", "127.0.0.2"),
    ]


def test_gain_wants_destinations_or_a_mesh_not_both(tmp_path: Path) -> None:
    out = mptcplab("gain", "-o", str(tmp_path / "r.jsonl"))
    assert out.returncode == 2 and "give the destinations (perf servers), or a --mesh" in out.stderr
    out = mptcplab("gain", "127.0.0.1", "--mesh", str(tmp_path / "m.toml"))
    assert out.returncode == 2 and "not both" in out.stderr


def test_matrix_marks_only_the_critical_relations(tmp_path: Path) -> None:
    def record(transport: str, source: str, mbps: float) -> dict[str, object]:
        return {
            "host": "h",
            "family": 4,
            "transport": transport,
            "bind": source,
            "source": source,
            "server": "d",
            "goodput_mbps": mbps,
            "mptcp": transport == "mptcp",
        }

    records = tmp_path / "r.jsonl"
    made = [record("tcp", "a", 5.0), record("tcp", "b", 20.0), record("mptcp", "a", 10.0)]
    records.write_text("".join(json.dumps(r) + "\n" for r in made))
    out = mptcplab("matrix", str(records))
    assert out.returncode == 0, out.stderr
    rows = {
        line.split()[0]: line
        for line in out.stdout.splitlines()
        if line.strip()[:2] in ("a ", "b ")
    }
    assert "50–80 %" in rows["b"] and "nan" not in rows["a"]
    assert "1 of 2 relations critical" in out.stdout

"""The series of one host: the order of its transfers, its record file, its resumption."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from mptcplab.backends.perf import gain
from mptcplab.backends.perf.server import PerfServer
from mptcplab.errors import UserError


def test_each_round_takes_every_tcp_path_then_mptcp_per_destination() -> None:
    todo = gain.plan(["d1", "d2"], ["s1", "s2"], runs=2)
    one_round = [
        ("d1", "tcp", "s1"),
        ("d1", "tcp", "s2"),
        ("d1", "mptcp", "*"),
        ("d2", "tcp", "s1"),
        ("d2", "tcp", "s2"),
        ("d2", "mptcp", "*"),
    ]
    assert [t.key for t in todo] == one_round * 2


def test_without_sources_tcp_goes_where_the_routing_table_sends_it() -> None:
    assert [t.key for t in gain.plan(["d"], [], runs=1)] == [("d", "tcp", "*"), ("d", "mptcp", "*")]


def test_what_is_recorded_is_not_made_again_and_counts_once() -> None:
    todo = gain.plan(["d"], ["s"], runs=3)
    done = [
        {"server": "d", "transport": "tcp", "bind": "s"},
        {"server": "d", "transport": "tcp", "bind": "s"},
        {"server": "d", "transport": "mptcp", "bind": "*", "error": "refused"},
        {"server": "elsewhere", "transport": "tcp", "bind": "s"},
    ]
    # Rounds 1 and 2 took their TCP transfer, round 1 its MPTCP one (failed, but made).
    assert [t.key for t in gain.remaining(todo, done)] == [
        ("d", "mptcp", "*"),
        ("d", "tcp", "s"),
        ("d", "mptcp", "*"),
    ]


def test_a_record_cut_short_at_the_end_is_dropped_one_in_the_middle_is_not(
    tmp_path: Path,
) -> None:
    path = tmp_path / "r.jsonl"
    good = json.dumps({"transport": "tcp", "server": "d"})
    path.write_text(f"{good}\n{good[:10]}")
    assert len(gain.read_records(path)) == 1
    path.write_text(f"{good[:10]}\n{good}\n")
    with pytest.raises(UserError, match="not a JSON record") as err:
        gain.read_records(path)
    assert err.value.line == 1 and err.value.file == str(path)
    path.write_text('{"x": 1}\n')
    with pytest.raises(UserError, match="not a mptcplab perf record"):
        gain.read_records(path)


def test_a_series_records_each_transfer_and_a_rerun_resumes(
    perf_server: PerfServer, tmp_path: Path
) -> None:
    out = tmp_path / "records.jsonl"
    todo = gain.plan(["127.0.0.1"], ["127.0.0.1"], runs=1)
    made = list(gain.run_series(todo, out, port=perf_server.port, duration_s=0.1))
    assert [r["transport"] for r in made] == ["tcp", "mptcp"] or "error" in made[1]
    assert gain.read_records(out) == made
    assert gain.remaining(todo, gain.read_records(out)) == []
    more = gain.remaining(gain.plan(["127.0.0.1"], ["127.0.0.1"], runs=2), made)
    assert [t.key for t in more] == [t.key for t in todo]


def test_a_failed_transfer_is_recorded_with_its_reason(tmp_path: Path) -> None:
    import socket

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    out = tmp_path / "records.jsonl"
    todo = gain.plan(["127.0.0.1"], [], runs=1)[:1]
    (record,) = gain.run_series(todo, out, port=port, duration_s=0.1)
    assert "refused" in record["error"] and record["transport"] == "tcp"
    assert gain.read_records(out) == [record]


def test_a_failed_transfer_names_its_addresses_as_a_transfer_that_got_through(
    tmp_path: Path,
) -> None:
    import socket

    if not socket.has_ipv6:
        pytest.skip("no IPv6 on this machine")
    with socket.socket(socket.AF_INET6) as probe:
        try:
            probe.bind(("::1", 0))
        except OSError:
            pytest.skip("no IPv6 loopback on this machine")
        port = probe.getsockname()[1]
    # Written out in full: a transfer that gets through records the socket's "::1", and the
    # matrix groups a relation's runs by that string.
    longhand = "0:0:0:0:0:0:0:1"
    todo = gain.plan([longhand], [longhand], runs=1)[:1]
    (record,) = gain.run_series(todo, tmp_path / "records.jsonl", port=port, duration_s=0.1)
    assert "error" in record
    assert (record["source"], record["destination"]) == ("::1", "::1")
    assert record["bind"] == record["server"] == longhand


def test_each_record_keeps_the_settings_its_series_asked(
    perf_server: PerfServer, tmp_path: Path
) -> None:
    out = tmp_path / "records.jsonl"
    todo = gain.plan(["127.0.0.1"], [], runs=1)
    made = list(
        gain.run_series(todo, out, port=perf_server.port, duration_s=0.1, congestion="reno")
    )
    asked = gain.requested(duration_s=0.1, family=None, congestion="reno", sndbuf_bytes=None)
    assert [r["requested"] for r in made] == [asked, asked]
    gain.check_resumable(gain.read_records(out), asked, out)  # the same settings resume


@pytest.mark.parametrize(
    ("now", "says"),
    [
        ({"duration_s": 5.0}, "--duration 1 (asked now: 5)"),
        ({"congestion": "cubic"}, "--cc reno (asked now: cubic)"),
        ({"family": 6}, "-4/-6 default (asked now: 6)"),
    ],
)
def test_a_series_of_other_settings_does_not_resume_the_file(now: dict, says: str) -> None:
    """The transfers of the file would count as made, and the matrix would average them
    with the new ones: a 1 s Reno measurement answered a 5 s CUBIC request."""
    before = {"duration_s": 1.0, "family": None, "congestion": "reno", "sndbuf_bytes": 1024}
    records = [{"transport": "tcp", "requested": before}]
    with pytest.raises(UserError, match="holds transfers made with") as err:
        gain.check_resumable(records, before | now, Path("r.jsonl"))
    assert says in str(err.value) and "give those, or another --out" in str(err.value)
    with pytest.raises(UserError, match="a record without the settings it was made with"):
        gain.check_resumable([{"transport": "tcp"}], before, Path("r.jsonl"))


def test_gain_refuses_to_add_to_a_file_of_other_settings(tmp_path: Path) -> None:
    from perf_cli import mptcplab

    path = tmp_path / "r.jsonl"
    asked = {"duration_s": 1.0, "family": None, "congestion": None, "sndbuf_bytes": 16777216}
    text = json.dumps({"transport": "tcp", "server": "127.0.0.1", "requested": asked}) + "\n"
    path.write_text(text)
    out = mptcplab("gain", "127.0.0.1", "-t", "2", "-n", "1", "-o", str(path))
    assert out.returncode == 2 and "Traceback" not in out.stderr
    assert "--duration 1 (asked now: 2)" in out.stderr
    assert path.read_text() == text

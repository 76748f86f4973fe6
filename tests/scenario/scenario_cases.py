"""Scenarios that break one rule of ``Scenario::validate`` or of the serde types in
crates/mpsim/src/scenario.rs, each with the field the rule names and its message as written
there. Shared by the model tests and the Python/Rust agreement tests."""

from __future__ import annotations

import copy
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

BASE: dict[str, Any] = {
    "duration_s": 30.0,
    "links": [
        {"id": "a", "capacity_mbps": 8.0, "delay_ms": 10.0},
        {"id": "b", "capacity_mbps": 2.0, "delay_ms": 75.0},
    ],
    "flows": [{"id": "f", "protocol": "mptcp", "paths": [["a"], ["b"]]}],
}


# A window of at most the largest socket buffer, 2^31 - 1 bytes, in 1448-byte segments.
_WINDOW = (
    "expected {low} and at most 1483068 segments (the largest socket buffer, 2147483647 "
    "bytes, in full segments)"
)


def scenario(mutate: Callable[[dict[str, Any]], Any] | None = None) -> dict[str, Any]:
    data = copy.deepcopy(BASE)
    if mutate is not None:
        mutate(data)
    return data


def link(**fields: Any) -> Callable[[dict[str, Any]], None]:
    return lambda d: d["links"][0].update(fields)


def flow(**fields: Any) -> Callable[[dict[str, Any]], None]:
    return lambda d: d["flows"][0].update(fields)


def tcp(**fields: Any) -> Callable[[dict[str, Any]], None]:
    return lambda d: d["flows"][0].setdefault("tcp", {}).update(fields)


def top(**fields: Any) -> Callable[[dict[str, Any]], None]:
    return lambda d: d.update(fields)


@dataclass(frozen=True)
class Bad:
    name: str
    mutate: Callable[[dict[str, Any]], Any]
    field: str
    """Dotted path of the offending field."""
    message: str | None = None
    """The message of scenario.rs for a validate() rule; None for serde-level errors (types,
    unknown fields), whose wording is serde's."""


def _red(**over: Any) -> dict[str, Any]:
    q = {"kind": "red", "min_packets": 5, "max_packets": 15, "max_p": 0.1, "limit_packets": 60}
    q.update(over)
    return q


def _del_link_capacity(d: dict[str, Any]) -> None:
    del d["links"][0]["capacity_mbps"]


SEMANTIC: list[Bad] = [
    Bad(
        "zero duration",
        top(duration_s=0),
        "duration_s",
        "expected a duration in seconds > 0, got 0",
    ),
    Bad(
        "duration beyond the clock",
        top(duration_s=2.0**63),
        "duration_s",
        "expected a duration of at most 10000000000 s (the clock counts nanoseconds in 64 bits), "
        "got 9.223372036854776e18",
    ),
    Bad(
        "run shorter than a millisecond",
        top(duration_s=1e-10),
        "duration_s",
        "expected a duration of at least 0.001 s, got 1e-10",
    ),
    Bad("negative warm-up", top(warmup_s=-1), "warmup_s", "expected seconds ≥ 0, got -1"),
    Bad(
        "flow starting at the end",
        flow(start_s=30),
        "flows[0].start_s",
        "expected a start before duration_s = 30 s, got 30",
    ),
    Bad(
        "more subflows than a run holds",
        flow(count=6251, paths=[["a"]] * 32),
        "flows[0].count",
        "expected at most 200000 subflows in all (a path of each flow), got 200032 with this entry",
    ),
    Bad(
        # Each block's latency is kept: 23 million blocks took 720 MB.
        "more blocks than a run holds",
        lambda d: d["flows"].append(
            {
                "id": "g",
                "protocol": "tcp",
                "paths": [["a"]],
                "count": 2,
                "app": {"kind": "blocks", "block_bytes": 3},
            }
        ),
        "flows[1].app.block_bytes",
        "expected at most 10000000 blocks in all (each one's latency is kept), but the paths can "
        "carry 20000000 with this entry in duration_s; use larger blocks",
    ),
    Bad(
        "more flows than a run holds",
        lambda d: d["flows"].append(
            {"id": "g", "protocol": "tcp", "paths": [["a"]], "count": 100_000}
        ),
        "flows[1].count",
        "expected at most 100000 flows in all, got 100001 with this entry",
    ),
    Bad(
        "traces too fine to hold",
        top(trace=["cwnd", "queue"], trace_interval_ms=1e-3),
        "trace_interval_ms",
        "expected at least 0.0024 ms for these traces (4 series over 30 s; at most 50000000 "
        "samples in all), got 0.001",
    ),
    Bad(
        "warm-up as long as the run",
        top(warmup_s=30),
        "warmup_s",
        "expected a warm-up at least 0.001 s shorter than duration_s = 30 s, got 30",
    ),
    Bad(
        # Its measured period rounded to no time: every rate of the report was NaN.
        "warm-up leaving less than the shortest run",
        top(duration_s=1.0, warmup_s=0.9999999999),
        "warmup_s",
        "expected a warm-up at least 0.001 s shorter than duration_s = 1 s, got 0.9999999999",
    ),
    Bad(
        # It rounded to no time at all: the run took sample after sample at one instant until
        # memory ran out.
        "trace interval below the clock's nanosecond",
        top(trace=["cwnd"], trace_interval_ms=1e-7, duration_s=0.001),
        "trace_interval_ms",
        "expected at least 1e-6 ms (the clock's nanosecond), got 1e-7",
    ),
    Bad(
        "zero trace interval",
        top(trace_interval_ms=0),
        "trace_interval_ms",
        "expected milliseconds > 0, got 0",
    ),
    Bad("no links", lambda d: d.update(links=[]), "links", "expected at least one link"),
    Bad("no flows", top(flows=[]), "flows", "expected at least one flow"),
    Bad("empty link id", link(id=""), "links[0].id", "expected a non-empty link id"),
    Bad(
        "link id used twice",
        lambda d: d["links"][1].update(id="a"),
        "links[1].id",
        "link id 'a' is used twice",
    ),
    Bad(
        "negative capacity",
        link(capacity_mbps=-8),
        "links[0].capacity_mbps",
        "expected a capacity in Mbit/s > 0, got -8",
    ),
    # Far from 1, a number comes back in the exponent form it was likely written in, not as
    # hundreds of digits.
    Bad(
        "huge negative capacity",
        link(capacity_mbps=-1e300),
        "links[0].capacity_mbps",
        "expected a capacity in Mbit/s > 0, got -1e300",
    ),
    Bad(
        "tiny negative delay",
        link(delay_ms=-1.5e-300),
        "links[0].delay_ms",
        "expected a delay in ms ≥ 0, got -1.5e-300",
    ),
    Bad(
        "huge loss",
        link(loss=2.5e17),
        "links[0].loss",
        "expected a probability in [0, 1), got 2.5e17",
    ),
    Bad(
        # A full packet took no time on the clock: over a link of no delay the window went
        # round at one instant and the run never ended.
        "capacity beyond the clock",
        link(capacity_mbps=1e8, delay_ms=0),
        "links[0].capacity_mbps",
        "expected a capacity of at most 200000 Mbit/s (the nanosecond clock times a full packet "
        "to within 1 % up to there), got 100000000",
    ),
    Bad(
        "reverse capacity below a bit per second",
        link(reverse_capacity_mbps=5e-324),
        "links[0].reverse_capacity_mbps",
        "expected a capacity of at least 1e-6 Mbit/s (1 bit/s), got 5e-324",
    ),
    Bad(
        "control character in a link id",
        link(id="a\x1b[2J"),
        "links[0].id",
        "expected an id without control characters",
    ),
    Bad(
        "control character in a flow id",
        flow(id="f\n"),
        "flows[0].id",
        "expected an id without control characters",
    ),
    Bad(
        "zero capacity",
        link(capacity_mbps=0),
        "links[0].capacity_mbps",
        "expected a capacity in Mbit/s > 0, got 0",
    ),
    Bad(
        "negative delay",
        link(delay_ms=-0.5),
        "links[0].delay_ms",
        "expected a delay in ms ≥ 0, got -0.5",
    ),
    Bad(
        "delay beyond the clock",
        link(delay_ms=1e300),
        "links[0].delay_ms",
        "expected a delay of at most 10000000000000 ms (the clock counts nanoseconds in 64 "
        "bits), got 1e300",
    ),
    Bad(
        "jitter beyond the clock",
        link(jitter_ms=2e13),
        "links[0].jitter_ms",
        "expected a jitter of at most 10000000000000 ms (the clock counts nanoseconds in 64 "
        "bits), got 20000000000000",
    ),
    Bad("loss of one", link(loss=1.0), "links[0].loss", "expected a probability in [0, 1), got 1"),
    Bad(
        "negative loss",
        link(loss=-0.01),
        "links[0].loss",
        "expected a probability in [0, 1), got -0.01",
    ),
    Bad(
        "negative jitter",
        link(jitter_ms=-1),
        "links[0].jitter_ms",
        "expected a jitter in ms ≥ 0, got -1",
    ),
    Bad(
        "zero reverse capacity",
        link(reverse_capacity_mbps=0),
        "links[0].reverse_capacity_mbps",
        "expected a capacity in Mbit/s > 0, got 0",
    ),
    Bad(
        "reverse queue without capacity",
        link(reverse_queue={"kind": "droptail", "packets": 10}),
        "links[0].reverse_queue",
        "a reverse queue needs reverse_capacity_mbps",
    ),
    Bad(
        "droptail without size",
        link(queue={"kind": "droptail"}),
        "links[0].queue",
        "a droptail queue takes exactly one of packets, bytes or ms",
    ),
    Bad(
        "droptail with two sizes",
        link(queue={"kind": "droptail", "packets": 5, "ms": 80}),
        "links[0].queue",
        "a droptail queue takes exactly one of packets, bytes or ms",
    ),
    Bad(
        "droptail negative ms",
        link(queue={"kind": "droptail", "ms": -1}),
        "links[0].queue.ms",
        "expected milliseconds ≥ 0, got -1",
    ),
    Bad(
        "reverse droptail without size",
        link(reverse_capacity_mbps=1, reverse_queue={"kind": "droptail"}),
        "links[0].reverse_queue",
        "a droptail queue takes exactly one of packets, bytes or ms",
    ),
    Bad(
        "RED thresholds above its buffer",
        link(queue=_red(min_packets=100, max_packets=200, limit_packets=50)),
        "links[0].queue.min_packets",
        "expected a threshold below limit_packets (50), or RED never drops early, got 100",
    ),
    Bad(
        "RED negative min",
        link(queue=_red(min_packets=-1)),
        "links[0].queue.min_packets",
        "expected packets ≥ 0, got -1",
    ),
    Bad(
        "RED max below min",
        link(queue=_red(max_packets=5)),
        "links[0].queue.max_packets",
        "expected a threshold above min_packets (5), got 5",
    ),
    Bad(
        "RED zero max_p",
        link(queue=_red(max_p=0)),
        "links[0].queue.max_p",
        "expected a probability in (0, 1], got 0",
    ),
    Bad(
        "RED max_p above one",
        link(queue=_red(max_p=1.5)),
        "links[0].queue.max_p",
        "expected a probability in (0, 1], got 1.5",
    ),
    Bad(
        "RED zero weight",
        link(queue=_red(weight=0)),
        "links[0].queue.weight",
        "expected an EWMA weight in (0, 1], got 0",
    ),
    Bad(
        "RED zero limit",
        link(queue=_red(limit_packets=0)),
        "links[0].queue.limit_packets",
        "expected ≥ 1 packet",
    ),
    Bad("empty flow id", flow(id=""), "flows[0].id", "expected a non-empty flow id without '#'"),
    Bad(
        "flow id with #", flow(id="x#1"), "flows[0].id", "expected a non-empty flow id without '#'"
    ),
    Bad(
        "flow id used twice",
        lambda d: d["flows"].append({"id": "f", "protocol": "tcp", "paths": [["a"]]}),
        "flows[1].id",
        "flow id 'f' is used twice",
    ),
    Bad(
        "no paths",
        flow(paths=[]),
        "flows[0].paths",
        "expected at least one path (a list of link ids)",
    ),
    Bad(
        "tcp over two paths",
        flow(protocol="tcp"),
        "flows[0].paths",
        'a tcp flow takes exactly one path, got 2; use protocol = "mptcp"',
    ),
    Bad(
        "33 subflows",
        flow(paths=[["a"]] * 33),
        "flows[0].paths",
        "at most 32 subflows per connection",
    ),
    Bad(
        "empty path",
        flow(paths=[["a"], []]),
        "flows[0].paths[1]",
        "expected a non-empty list of link ids",
    ),
    Bad(
        "missing link",
        flow(paths=[["a"], ["wlan"]]),
        "flows[0].paths[1][0]",
        "unknown link 'wlan'; links are: a, b",
    ),
    Bad(
        "link twice in a path",
        flow(paths=[["a", "b", "a"]]),
        "flows[0].paths[0][2]",
        "link 'a' appears twice in one path",
    ),
    Bad(
        "auto buffer with a size",
        flow(rcvbuf="auto", rcvbuf_bytes=100000),
        "flows[0].rcvbuf_bytes",
        'rcvbuf = "auto" takes rcvbuf_max_bytes, not rcvbuf_bytes',
    ),
    Bad(
        # Named where the document has it, not at a field it lacks.
        "fixed buffer without size",
        flow(rcvbuf="fixed"),
        "flows[0].rcvbuf",
        'rcvbuf = "fixed" needs rcvbuf_bytes',
    ),
    Bad(
        "cap of a fixed receive buffer",
        flow(rcvbuf_bytes=100_000, rcvbuf_max_bytes=5000),
        "flows[0].rcvbuf_max_bytes",
        'a fixed receive buffer (rcvbuf_bytes) takes no cap; rcvbuf_max_bytes caps rcvbuf = "auto"',
    ),
    Bad(
        "cap of a fixed send buffer",
        flow(sndbuf_bytes=100_000, sndbuf_max_bytes=5000),
        "flows[0].sndbuf_max_bytes",
        "a fixed send buffer (sndbuf_bytes) takes no cap; sndbuf_max_bytes caps the auto-tuned one",
    ),
    Bad(
        # The writer filled it skb by skb: the run took weeks.
        "send buffer beyond Linux's",
        flow(sndbuf_bytes=2**64 - 1),
        "flows[0].sndbuf_bytes",
        "expected at most 2147483647 bytes (Linux's socket buffer sizes are 32-bit ints), "
        "got 18446744073709551615",
    ),
    Bad(
        "receive buffer cap beyond Linux's",
        flow(rcvbuf_max_bytes=2**31),
        "flows[0].rcvbuf_max_bytes",
        "expected at most 2147483647 bytes (Linux's socket buffer sizes are 32-bit ints), "
        "got 2147483648",
    ),
    Bad(
        "receive buffer below a segment",
        flow(rcvbuf_bytes=1000),
        "flows[0].rcvbuf_bytes",
        "expected at least one segment (1448 bytes), got 1000",
    ),
    Bad(
        "send cap below a segment",
        flow(sndbuf_max_bytes=10),
        "flows[0].sndbuf_max_bytes",
        "expected at least one segment (1448 bytes), got 10",
    ),
    Bad("zero count", flow(count=0), "flows[0].count", "expected a count ≥ 1"),
    Bad("negative start", flow(start_s=-1), "flows[0].start_s", "expected seconds ≥ 0, got -1"),
    Bad(
        "stop at the start",
        flow(start_s=2.5, stop_s=2.5),
        "flows[0].stop_s",
        "expected seconds after start_s (2.5), got 2.5",
    ),
    Bad(
        "stop before the start",
        flow(stop_s=-1),
        "flows[0].stop_s",
        "expected seconds after start_s (0), got -1",
    ),
    Bad(
        "stop before a start of seven digits",
        flow(start_s=1.2345678, stop_s=1.2345671),
        "flows[0].stop_s",
        "expected seconds after start_s (1.2345678), got 1.2345671",
    ),
    Bad(
        "negative join delay",
        flow(join_delay_s=-0.25),
        "flows[0].join_delay_s",
        "expected seconds ≥ 0, got -0.25",
    ),
    Bad(
        "zero block",
        flow(app={"kind": "blocks", "block_bytes": 0}),
        "flows[0].app.block_bytes",
        "expected a block size ≥ 1 byte",
    ),
    Bad(
        "zero transfer",
        flow(app={"kind": "size", "bytes": 0}),
        "flows[0].app.bytes",
        "expected a transfer size ≥ 1 byte",
    ),
    Bad(
        "zero initial window",
        tcp(initial_window=0),
        "flows[0].tcp.initial_window",
        _WINDOW.format(low="≥ 1 segment"),
    ),
    Bad(
        "initial window beyond the largest buffer",
        tcp(initial_window=(2**31 - 1) // 1448 + 1),
        "flows[0].tcp.initial_window",
        _WINDOW.format(low="≥ 1 segment"),
    ),
    Bad("zero ABC limit", tcp(abc_limit=0), "flows[0].tcp.abc_limit", "expected ≥ 1"),
    Bad(
        "PRR with FACK",
        tcp(prr=True),
        "flows[0].tcp.prr",
        'expected true only with sack = true and loss_detection = "rack" '
        "(PRR is modelled with RACK)",
    ),
    Bad(
        "PRR without SACK",
        tcp(prr=True, sack=False, loss_detection="rack"),
        "flows[0].tcp.prr",
        'expected true only with sack = true and loss_detection = "rack" '
        "(PRR is modelled with RACK)",
    ),
    Bad(
        "zero min ssthresh",
        tcp(min_ssthresh_segments=0),
        "flows[0].tcp.min_ssthresh_segments",
        _WINDOW.format(low="≥ 1"),
    ),
    Bad(
        "min ssthresh beyond the largest buffer",
        tcp(min_ssthresh_segments=2**32 - 1),
        "flows[0].tcp.min_ssthresh_segments",
        _WINDOW.format(low="≥ 1"),
    ),
    Bad(
        "zero oretx factor",
        tcp(oretx_rtt_factor=0),
        "flows[0].tcp.oretx_rtt_factor",
        "expected a factor > 0, got 0",
    ),
]

STRUCTURAL: list[Bad] = [
    Bad("unknown top-level field", top(durration_s=3), "durration_s"),
    Bad("unknown link field", link(capcity_mbps=3), "links[0].capcity_mbps"),
    Bad("unknown queue field", link(queue={"kind": "droptail", "mss": 80}), "links[0].queue.mss"),
    Bad("unknown tcp option", tcp(fack=True), "flows[0].tcp.fack"),
    Bad("missing capacity", _del_link_capacity, "links[0].capacity_mbps"),
    Bad("missing duration", lambda d: d.pop("duration_s"), "duration_s"),
    Bad("unknown protocol", flow(protocol="udp"), "flows[0].protocol"),
    Bad("unknown cc", flow(cc="vegas"), "flows[0].cc"),
    Bad("unknown scheduler", flow(scheduler="blest"), "flows[0].scheduler"),
    Bad("unknown queue kind", link(queue={"kind": "fifo", "ms": 80}), "links[0].queue"),
    Bad("queue without kind", link(queue={"ms": 80}), "links[0].queue"),
    Bad("unknown app kind", flow(app={"kind": "video"}), "flows[0].app"),
    Bad("unknown trace", top(trace=["cwnd", "throughput"]), "trace[1]"),
    Bad("float for an integer", flow(rcvbuf_bytes=4.0e6), "flows[0].rcvbuf_bytes"),
    Bad("string for a number", link(capacity_mbps="8"), "links[0].capacity_mbps"),
    Bad("number for a bool", flow(opportunistic_retransmit=1), "flows[0].opportunistic_retransmit"),
    Bad("negative count", flow(count=-1), "flows[0].count"),
    Bad("count beyond u32", flow(count=2**32), "flows[0].count"),
    Bad("negative seed", top(seed=-1), "seed"),
    Bad("path not a list", flow(paths=[["a"], "b"]), "flows[0].paths[1]"),
    Bad("link id not a string", link(id=1), "links[0].id"),
    Bad("size app without bytes", flow(app={"kind": "size"}), "flows[0].app.bytes"),
]

GOOD: list[tuple[str, Callable[[dict[str, Any]], Any]]] = [
    ("base", lambda d: None),
    ("loss just below one", link(loss=0.999)),
    (
        "the fastest and slowest links",
        lambda d: (
            d["links"][0].update(capacity_mbps=2e5, delay_ms=0)
            or d["links"][1].update(capacity_mbps=1e-6)
        ),
    ),
    ("buffers of Linux's largest", flow(sndbuf_bytes=2**31 - 1, rcvbuf_max_bytes=2**31 - 1)),
    ("blocks up to the run's limit", flow(app={"kind": "blocks", "block_bytes": 4})),
    ("zero-size ms queue", link(queue={"kind": "droptail", "ms": 0})),
    ("RED with max_p one", link(queue=_red(max_p=1.0, gentle=False, instantaneous=True))),
    (
        "reverse direction",
        link(reverse_capacity_mbps=1, reverse_queue={"kind": "droptail", "bytes": 30000}),
    ),
    ("integer for a number", link(capacity_mbps=8, delay_ms=0)),
    ("count and apps", flow(count=3, app={"kind": "blocks"})),
    ("size app", flow(app={"kind": "size", "bytes": 1})),
    ("buffers of one segment", flow(rcvbuf="fixed", rcvbuf_bytes=1448, sndbuf_bytes=1448)),
    ("auto buffer with a cap", flow(rcvbuf="auto", rcvbuf_max_bytes=1 << 22)),
    ("32 subflows", flow(paths=[["a"]] * 32)),
    ("the largest seed", top(seed=2**64 - 1)),
    (
        "all traces",
        top(
            trace=["cwnd", "ssthresh", "srtt", "rwnd", "queue", "blocks", "cwnd"],
            trace_interval_ms=1,
        ),
    ),
    (
        "every tcp option",
        tcp(
            initial_window=1,
            delayed_ack=True,
            rto_policy="rfc6298",
            loss_detection="rack",
            abc_limit=1,
            count_mode="per_segment",
            recovery_uses_ssthresh=False,
            min_ssthresh_segments=1,
            cwnd_limited_gate=False,
            oretx_rtt_factor=0.5,
            oretx_small_cwnd=0,
        ),
    ),
    (
        "tcp with a coupled cc",
        lambda d: d["flows"].append(
            {
                "id": "t",
                "protocol": "tcp",
                "cc": "olia",
                "paths": [["b"]],
                "start_s": 1,
                "stop_s": 1.5,
                "join_delay_s": 0,
                "penalization": "off",
                "opportunistic_retransmit": False,
            }
        ),
    ),
]

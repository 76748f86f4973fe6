"""The scenario model: pydantic mirrors of mpsim's serde types (crates/mpsim/src/scenario.rs).

A scenario is described once and run on any backend (DESIGN.md "Scenario"). The Rust types are
the reference: every field here has the same name, type, default and unit, unknown fields are
refused (``deny_unknown_fields`` ↔ ``extra="forbid"``), the queue and application are unions
tagged by ``kind``, and numbers are as strict as serde (an integer field refuses ``4.0``, a number
field refuses ``"8"``). ``Scenario::validate`` is mirrored check for check, with the same field
paths and messages, so a scenario accepted here is accepted by the simulator and problems are
reported with the line they come from before any Rust code runs.

Errors raised by these models are :class:`pydantic.ValidationError`; :func:`issues` turns one into
a list of :class:`Issue` (document location, dotted field, message saying what was expected).
"""

from __future__ import annotations

import contextlib
import difflib
import json
import math
import types
import typing
import unicodedata
from dataclasses import dataclass
from typing import Annotated, Any, Literal, Union

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    Strict,
    ValidationError,
    field_validator,
    model_validator,
)
from pydantic_core import PydanticCustomError

from mptcplab.scenario.field_docs import field_doc
from mptcplab.scenario.number_text import number_text as _num
from mptcplab.scenario.vocabulary import MAX_DURATION_S, MIN_DURATION_S, TraceKind

__all__ = [
    "DEFAULT_BUFFER_CAP_BYTES",
    "HEADER_BYTES",
    "MSS_BYTES",
    "AppSpec",
    "BlocksApp",
    "BufferMode",
    "BulkApp",
    "CcKind",
    "CountMode",
    "CubicVariant",
    "CwndLimitedCheck",
    "DropTailQueue",
    "DrsVariant",
    "FlowSpec",
    "Issue",
    "LinkSpec",
    "LossDetection",
    "Penalization",
    "Protocol",
    "QueueSpec",
    "RedQueue",
    "RtoPolicy",
    "Scenario",
    "SchedulerKind",
    "SizeApp",
    "TcpOptions",
    "TraceKind",
    "dotted",
    "issues",
]

#: Payload of a full segment and per-packet header overhead (IP 20 + TCP 20 + timestamps 12),
#: as in scenario.rs: a full segment is a 1500-byte packet.
MSS_BYTES = 1448
HEADER_BYTES = 52
#: Default cap of auto-tuned buffers (4 MiB; CoNEXT 2013 used 4 MB).
DEFAULT_BUFFER_CAP_BYTES = 4 * 1024 * 1024

_U64_MAX = 2**64 - 1
_U32_MAX = 2**32 - 1

U64 = Annotated[int, Field(ge=0, le=_U64_MAX)]
U32 = Annotated[int, Field(ge=0, le=_U32_MAX)]

Protocol = Literal["tcp", "mptcp"]
CcKind = Literal["reno", "cubic", "lia", "olia", "balia"]
SchedulerKind = Literal["minrtt", "roundrobin", "redundant", "linger"]
Penalization = Literal["off", "nsdi12", "conext13"]
BufferMode = Literal["auto", "fixed"]
RtoPolicy = Literal["linux", "rfc6298"]
LossDetection = Literal["fack", "rack"]
CountMode = Literal["per_ack", "per_segment"]
CwndLimitedCheck = Literal["per_ack", "per_round"]
CubicVariant = Literal["rfc9438", "linux"]
DrsVariant = Literal["classic", "linux"]

# serde accepts only JSON arrays for Vec; tuples are accepted here for convenience (a tuple
# serialises as an array, so the simulator sees the same thing).
Path = Annotated[list[str], Strict(False)]


class _Model(BaseModel):
    # The fields' docstrings are read when a message needs one (field_docs.py).
    model_config = ConfigDict(extra="forbid", strict=True)


class _Tagged(_Model):
    """A member of a union told apart by its ``kind``."""

    def model_post_init(self, context: Any, /) -> None:
        # The kind names the member even when left to its default: a dump of only the fields
        # set (what `with_overrides` validates again) must keep it, or reading the dump back
        # finds a queue or an application of no kind.
        self.model_fields_set.add("kind")


def _invalid(field: str, message: str) -> PydanticCustomError:
    """A failed check; ``field`` is relative to the model that raises it ("" for the model)."""
    return PydanticCustomError(
        "scenario_invalid", "{message}", {"field": field, "message": message}
    )


# Longest link delay or jitter, ms (scenario.rs, MAX_DELAY_MS): the same clock limit.
MAX_DELAY_MS = MAX_DURATION_S * 1e3
# Most flows of a run, each of an entry's `count` counted (scenario.rs, MAX_FLOWS).
MAX_FLOWS = 100_000
# Most subflows of a run, a path of each flow (scenario.rs, MAX_SUBFLOWS).
MAX_SUBFLOWS = 200_000
# Fastest and slowest link, Mbit/s (scenario.rs, MAX_CAPACITY_MBPS, MIN_CAPACITY_MBPS): the
# nanosecond clock times a full packet to within 1 %; one bit per second.
MAX_CAPACITY_MBPS = 2e5
MIN_CAPACITY_MBPS = 1e-6
# Largest socket buffer, bytes: Linux's are 32-bit ints (scenario.rs, MAX_BUFFER_BYTES).
MAX_BUFFER_BYTES = 2**31 - 1
# Largest initial window or ssthresh floor, segments: what that buffer holds
# (scenario.rs, MAX_WINDOW_SEGMENTS).
MAX_WINDOW_SEGMENTS = MAX_BUFFER_BYTES // MSS_BYTES


def _window_expected(low: str) -> str:
    return (
        f"expected {low} and at most {MAX_WINDOW_SEGMENTS} segments (the largest socket "
        f"buffer, {MAX_BUFFER_BYTES} bytes, in full segments)"
    )


# Most blocks the blocks applications can complete in a run (scenario.rs, MAX_BLOCKS).
MAX_BLOCKS = 1e7
# Most trace samples of a run over every series, 8 bytes each (scenario.rs, MAX_TRACE_VALUES).
MAX_TRACE_VALUES = 5e7
# Shortest trace interval, ms: the clock's nanosecond (scenario.rs, MIN_TRACE_INTERVAL_MS).
MIN_TRACE_INTERVAL_MS = 1e-6


def _finite_at_least(v: float, minimum: float, field: str, what: str) -> None:
    if not math.isfinite(v) or v < minimum:
        raise _invalid(field, f"expected {what}, got {_num(v)}")


def _within_clock_ms(v: float, field: str, what: str) -> None:
    if v > MAX_DELAY_MS:
        raise _invalid(
            field,
            f"expected {what} of at most {_num(MAX_DELAY_MS)} ms (the clock counts nanoseconds "
            f"in 64 bits), got {_num(v)}",
        )


def _positive(v: float, field: str, what: str) -> None:
    if not math.isfinite(v) or v <= 0.0:
        raise _invalid(field, f"expected {what} > 0, got {_num(v)}")


def _capacity(v: float, field: str) -> None:
    _positive(v, field, "a capacity in Mbit/s")
    if v > MAX_CAPACITY_MBPS:
        raise _invalid(
            field,
            f"expected a capacity of at most {_num(MAX_CAPACITY_MBPS)} Mbit/s (the nanosecond "
            f"clock times a full packet to within 1 % up to there), got {_num(v)}",
        )
    if v < MIN_CAPACITY_MBPS:
        raise _invalid(
            field,
            f"expected a capacity of at least {_num(MIN_CAPACITY_MBPS)} Mbit/s (1 bit/s), "
            f"got {_num(v)}",
        )


def _plain_id(value: str, field: str) -> None:
    # What Rust's char::is_control calls a control character: Unicode's category Cc.
    if any(unicodedata.category(c) == "Cc" for c in value):
        raise _invalid(field, "expected an id without control characters")


# ---- queues -------------------------------------------------------------------------------


class DropTailQueue(_Tagged):
    """Tail drop; exactly one of ``packets``, ``bytes`` or ``ms``. The capacity counts the
    packet being sent, and an empty queue always takes one: a size below one packet, 0 among
    them, is a link without a buffer."""

    kind: Literal["droptail"] = "droptail"
    packets: U64 | None = None
    """Capacity in packets."""
    bytes: U64 | None = None
    """Capacity in bytes."""
    ms: float | None = None
    """Capacity in milliseconds of the link rate (bytes = rate × ms)."""

    @model_validator(mode="after")
    def _check(self) -> DropTailQueue:
        given = sum(x is not None for x in (self.packets, self.bytes, self.ms))
        if given != 1:
            raise _invalid("", "a droptail queue takes exactly one of packets, bytes or ms")
        if self.ms is not None:
            _finite_at_least(self.ms, 0.0, "ms", "milliseconds ≥ 0")
        return self


class RedQueue(_Tagged):
    """Floyd–Jacobson RED, gentle form by default (spec §5.4). Thresholds in packets."""

    kind: Literal["red"] = "red"
    min_packets: float
    """Average queue (packets) below which nothing is dropped."""
    max_packets: float
    """Average queue (packets) at which the drop probability reaches ``max_p``."""
    max_p: float
    """Drop probability at ``max_packets``, in (0, 1]."""
    weight: float = 0.002
    """EWMA weight of the average queue, in (0, 1]. Default 0.002."""
    limit_packets: U64
    """Physical buffer, packets."""
    gentle: bool = True
    """Probability rises from ``max_p`` to 1 between ``max_packets`` and twice it. Default true."""
    instantaneous: bool = False
    """Use the instantaneous queue instead of the EWMA average. Default false."""

    @model_validator(mode="after")
    def _check(self) -> RedQueue:
        _finite_at_least(self.min_packets, 0.0, "min_packets", "packets ≥ 0")
        if not (math.isfinite(self.max_packets) and self.max_packets > self.min_packets):
            raise _invalid(
                "max_packets",
                f"expected a threshold above min_packets ({_num(self.min_packets)}), "
                f"got {_num(self.max_packets)}",
            )
        if not (0.0 < self.max_p <= 1.0):
            raise _invalid("max_p", f"expected a probability in (0, 1], got {_num(self.max_p)}")
        if not (0.0 < self.weight <= 1.0):
            raise _invalid("weight", f"expected an EWMA weight in (0, 1], got {_num(self.weight)}")
        if self.limit_packets == 0:
            raise _invalid("limit_packets", "expected ≥ 1 packet")
        # The average never exceeds the buffer: at or above it, RED never drops early.
        if self.min_packets >= self.limit_packets:
            raise _invalid(
                "min_packets",
                f"expected a threshold below limit_packets ({self.limit_packets}), or RED never "
                f"drops early, got {_num(self.min_packets)}",
            )
        return self


QueueSpec = Annotated[DropTailQueue | RedQueue, Field(discriminator="kind")]

# ---- applications -------------------------------------------------------------------------


class BulkApp(_Tagged):
    """Always has data to send."""

    kind: Literal["bulk"] = "bulk"


class BlocksApp(_Tagged):
    """Writes blocks of ``block_bytes`` back to back; each block's latency runs from its write to
    its complete read at the receiver."""

    kind: Literal["blocks"] = "blocks"
    block_bytes: U64 = 8192
    """Block size, bytes. Default 8192."""

    @model_validator(mode="after")
    def _check(self) -> BlocksApp:
        if self.block_bytes == 0:
            raise _invalid("block_bytes", "expected a block size ≥ 1 byte")
        return self


class SizeApp(_Tagged):
    """A finite transfer of ``bytes``; records the completion time."""

    kind: Literal["size"] = "size"
    bytes: U64
    """Transfer size, bytes."""

    @model_validator(mode="after")
    def _check(self) -> SizeApp:
        if self.bytes == 0:
            raise _invalid("bytes", "expected a transfer size ≥ 1 byte")
        return self


AppSpec = Annotated[BulkApp | BlocksApp | SizeApp, Field(discriminator="kind")]

# ---- transport options --------------------------------------------------------------------


class TcpOptions(_Model):
    """Transport details; defaults follow Linux."""

    initial_window: U32 = 10
    """Initial window, segments (RFC 6928). Default 10."""
    delayed_ack: bool = False
    """Delayed ACKs: ACK every second full segment or after 40 ms (Linux). Default false."""
    rto_policy: RtoPolicy = "linux"
    """``linux``: RTO = SRTT + max(200 ms, 4·RTTVAR); ``rfc6298``: 1 s floor. Default linux."""
    sack: bool = True
    """Selective acknowledgements with SACK-based loss recovery (RFC 2018, RFC 6675), as Linux
    does; false = NewReno (RFC 6582). Default true."""
    loss_detection: LossDetection = "fack"
    """With SACK, how a segment is found lost: ``fack``, DupThresh segments' worth SACKed above
    it (Linux 2.6–4.14, the kernels of the published studies); ``rack``, a segment sent after
    it delivered and a reordering window passed (RFC 8985; Linux 4.18 on). Default fack."""
    abc_limit: U32 = 2
    """Appropriate byte counting limit L in slow start (RFC 3465). Default 2."""
    count_mode: CountMode = "per_ack"
    """Coupled-CC increment counting (spec §2.8 a): ``per_ack`` or ``per_segment``."""
    recovery_uses_ssthresh: bool = True
    """Coupled aggregates use ssthresh for subflows in fast recovery (spec §2.8 c). Default true."""
    min_ssthresh_segments: U32 | None = None
    """Minimum ssthresh after a loss, segments (spec §2.8 e). Default: each congestion
    control's own, 2 (Linux's Reno floor) except BALIA's coupled decrease, 1 (draft-walid §2 and
    Linux mptcp_balia.c)."""
    cwnd_limited_gate: bool = True
    """Grow cwnd only while the subflow is cwnd-limited (spec §2.8 f). Default true."""
    cwnd_limited_check: CwndLimitedCheck = "per_ack"
    """How the gate tells that the window is used: ``per_ack``, the data in flight before each
    ACK fills it, or half of it in slow start (like Linux before 3.16, the kernels of the
    published studies); ``per_round``, it was full after a send in the current round of data,
    or in slow start is below twice the most in flight then (Linux 3.16 on). Default per_ack."""
    oretx_rtt_factor: float = 4.0
    """Opportunistic retransmission fires when factor·srtt_S < srtt_T (spec §3.6). Default 4."""
    oretx_small_cwnd: U32 = 4
    """... or when the head-of-line subflow's cwnd ≤ this many segments; 0 = unconditional.
    Default 4."""
    hystart: bool = True
    """CUBIC only: Linux's HyStart slow-start exit (ACK train and delay increase). Default true,
    as Linux."""
    cubic_variant: CubicVariant = "rfc9438"
    """CUBIC only: how the window grows in congestion avoidance. ``rfc9438``: the
    Reno-friendly estimate grows by 3(1−β)/(1+β) segments per RTT up to the window of the last
    reduction, then by one. ``linux``: as Linux's ``tcp_cubic.c`` (3.x to today), by 8/15 of a
    segment per RTT throughout, and an epoch that began with no window maximum from a loss
    (after a slow start HyStart ended, or a timeout) grows by at least 5 % per RTT. Default
    rfc9438."""
    drs_variant: DrsVariant = "classic"
    """How an auto-tuned receive buffer grows (dynamic right-sizing, once per receiver RTT:
    the bytes read in that interval, doubled, plus a growth term). Either way the receiver's
    RTT comes from millisecond timestamps, one sample per echoed timestamp from full-sized
    segments. ``classic``: as Linux 4.19 to 6.15: every sample weighted 1/8, one under a
    millisecond counted as one, and 16 segments of slack. ``linux``: as Linux 6.16 on (the
    emulator's kernel): a smaller sample taken at once and a larger one weighted 1/8, so that
    it stays near the path's smallest RTT while a queue builds, one under a millisecond
    dropped; no slack. Default classic."""
    prr: bool = False
    """With ``loss_detection = "rack"``: Proportional Rate Reduction (RFC 6937) in fast
    recovery, as Linux (3.2 on; its current form, 5.12 on): the window comes down to ssthresh
    in proportion to the data delivered, then grows back by at most one segment per ACK,
    instead of being set to ssthresh at once (RFC 6675). Default false."""
    slow_start_after_idle: bool = False
    """Restart the congestion window of a subflow that sent nothing for longer than its RTO
    (RFC 5681 §4.1, RFC 2861): ssthresh keeps ¾ of the window, which halves once per RTO of the
    idle time after the first, down to the initial window. Linux does this by default
    (``net.ipv4.tcp_slow_start_after_idle``), and upstream MPTCP once for each 32 KiB data
    fragment it queues on a subflow with nothing in flight; the emulator sets the sysctl to
    this value. Default false."""

    @model_validator(mode="after")
    def _check(self) -> TcpOptions:
        if not 1 <= self.initial_window <= MAX_WINDOW_SEGMENTS:
            raise _invalid("initial_window", _window_expected("≥ 1 segment"))
        if self.abc_limit == 0:
            raise _invalid("abc_limit", "expected ≥ 1")
        floor = self.min_ssthresh_segments  # None: the default
        if floor is not None and not 1 <= floor <= MAX_WINDOW_SEGMENTS:
            raise _invalid("min_ssthresh_segments", _window_expected("≥ 1"))
        _positive(self.oretx_rtt_factor, "oretx_rtt_factor", "a factor")
        if self.prr and not (self.sack and self.loss_detection == "rack"):
            raise _invalid(
                "prr",
                'expected true only with sack = true and loss_detection = "rack" '
                "(PRR is modelled with RACK)",
            )
        return self


# ---- links and flows ----------------------------------------------------------------------


class LinkSpec(_Model):
    """One link: a forward direction with a queue, and a reverse direction that carries ACKs with
    the same propagation delay and no queueing unless ``reverse_capacity_mbps`` is given."""

    id: str
    """Name used in flow paths; unique, non-empty."""
    capacity_mbps: float
    """Forward rate, Mbit/s (> 0)."""
    delay_ms: float
    """One-way propagation delay, milliseconds (≥ 0)."""
    queue: QueueSpec | None = None
    """Forward queue. Default: drop-tail of one bandwidth-delay product of this link
    (capacity × 2 × delay), at least 10 packets."""
    loss: float = 0.0
    """Bernoulli loss probability applied to each packet entering the link, in [0, 1).
    Default 0."""
    jitter_ms: float = 0.0
    """Maximum extra delay, milliseconds, drawn uniformly per packet. A packet never leaves
    before the one ahead of it (no reordering), so one drawn short behind one drawn long waits
    for it: the mean extra delay is above half the maximum (linkem does the same). Default 0."""
    reverse_capacity_mbps: float | None = None
    """Capacity of the reverse (ACK) direction, Mbit/s. Default: unlimited, no queueing."""
    reverse_queue: QueueSpec | None = None
    """Queue of the reverse direction when it has a capacity. Default as for ``queue``."""

    @model_validator(mode="after")
    def _check(self) -> LinkSpec:
        if not self.id:
            raise _invalid("id", "expected a non-empty link id")
        _plain_id(self.id, "id")
        _capacity(self.capacity_mbps, "capacity_mbps")
        _finite_at_least(self.delay_ms, 0.0, "delay_ms", "a delay in ms ≥ 0")
        _within_clock_ms(self.delay_ms, "delay_ms", "a delay")
        if not (0.0 <= self.loss < 1.0):
            raise _invalid("loss", f"expected a probability in [0, 1), got {_num(self.loss)}")
        _finite_at_least(self.jitter_ms, 0.0, "jitter_ms", "a jitter in ms ≥ 0")
        _within_clock_ms(self.jitter_ms, "jitter_ms", "a jitter")
        if self.reverse_capacity_mbps is not None:
            _capacity(self.reverse_capacity_mbps, "reverse_capacity_mbps")
        if self.reverse_queue is not None and self.reverse_capacity_mbps is None:
            raise _invalid("reverse_queue", "a reverse queue needs reverse_capacity_mbps")
        return self


class FlowSpec(_Model):
    """One flow, or ``count`` identical flows named ``id#0`` … ``id#N-1``."""

    id: str
    """Name of the flow; non-empty, unique, without '#'."""
    protocol: Protocol
    """``tcp`` (exactly one path) or ``mptcp`` (one subflow per path)."""
    cc: CcKind | None = None
    """Congestion control. Default ``reno`` for TCP, ``lia`` for MPTCP. The coupled ones
    (``lia``, ``olia``, ``balia``) couple the subflows of one connection: with a single path,
    as on a TCP flow, each is Reno (RFC 6356 §3, OLIA's α and BALIA's α are then 0 and 1)."""
    scheduler: SchedulerKind = "minrtt"
    """MPTCP packet scheduler. Default ``minrtt``."""
    paths: Annotated[list[Path], Strict(False)]
    """One path per subflow; a path is the ordered list of link ids from sender to receiver."""
    rcvbuf_bytes: U64 | None = None
    """Fixed receive buffer (window budget), bytes. Setting it selects ``rcvbuf = "fixed"``."""
    rcvbuf: BufferMode | None = None
    """``auto`` (Linux dynamic right-sizing) or ``fixed``. Default ``auto`` unless
    ``rcvbuf_bytes`` is set."""
    rcvbuf_max_bytes: U64 | None = None
    """Cap of the auto-tuned receive buffer (the window it may advertise, as ``rcvbuf_bytes``),
    bytes. Default 4 MiB."""
    sndbuf_bytes: U64 | None = None
    """Fixed send buffer, bytes: the memory the sender may hold queued, as Linux's sk_sndbuf
    (the emulator gives SO_SNDBUF half of it, which the kernel doubles). Default: auto-tuned
    like Linux's ``tcp_sndbuf_expand`` (2 · max(cwnd, 10) segments of 2304 charged bytes per
    subflow, about 3.2 windows of payload, never shrinking), capped by ``sndbuf_max_bytes``."""
    sndbuf_max_bytes: U64 | None = None
    """Cap of the auto-tuned send buffer, bytes. Default 4 MiB."""
    # No lower bound here: _check_count says a count ≥ 1 for any value below, zero and negative
    # alike (a bound of 0 here said "a value ≥ 0" for -1, then 0 was refused).
    count: Annotated[int, Field(le=_U32_MAX)] = 1
    """Number of identical flows; they appear as ``id#0`` … ``id#N-1`` and the simulator starts
    them at random within 0.1 s after ``start_s`` (within half the time left, when less), so
    that they do not move in lock-step. Default 1."""
    app: AppSpec = Field(default_factory=BulkApp)
    """What the application does: ``bulk`` (default), ``blocks`` or ``size``."""
    start_s: float = 0.0
    """When the connection is opened, seconds. Default 0."""
    stop_s: float | None = None
    """When the application stops writing, seconds (after ``start_s``); what it has written is
    still delivered. Default: it writes until the end of the run. Goodput is still counted over
    the whole measured period."""
    join_delay_s: float | None = None
    """Delay from the connection's establishment to each additional subflow's MP_JOIN
    handshake, seconds. Default: the first subflow's round trip (Linux opens subflows once the
    connection is fully established, its first data acknowledged). The handshake then takes
    two round trips of the subflow's path before it carries data."""
    penalization: Penalization | None = None
    """MPTCP: penalise slow subflows that block the receive window (spec §3.6): ``off``;
    ``nsdi12``, the out-of-tree code of 2011-2013 (the holder of the head of line is halved when
    its cwnd/srtt is below the sender's, at most once per its own srtt, and its ssthresh set
    to the halved window); ``conext13``, the later code with the CoNEXT 2013 fix (halved when
    its srtt is longer and it is not recovering, at most once per the sender's srtt, ssthresh
    kept in slow start). Default conext13."""
    opportunistic_retransmit: bool | None = None
    """MPTCP: opportunistic retransmission of the head-of-line segment. Default true."""
    tcp: TcpOptions = Field(default_factory=TcpOptions)
    """Transport details (defaults follow Linux)."""

    @field_validator("count")
    @classmethod
    def _check_count(cls, count: int) -> int:
        if count < 1:
            # Zero gets scenario.rs's words; a negative count never reaches it (a u32).
            raise _invalid("", "expected a count ≥ 1" + (f", got {count}" if count else ""))
        return count

    @model_validator(mode="after")
    def _check(self) -> FlowSpec:
        if not self.id or "#" in self.id:
            raise _invalid("id", "expected a non-empty flow id without '#'")
        _plain_id(self.id, "id")
        if not self.paths:
            raise _invalid("paths", "expected at least one path (a list of link ids)")
        if self.protocol == "tcp" and len(self.paths) != 1:
            raise _invalid(
                "paths",
                f'a tcp flow takes exactly one path, got {len(self.paths)}; use protocol = "mptcp"',
            )
        if len(self.paths) > 32:
            raise _invalid("paths", "at most 32 subflows per connection")
        for p, path in enumerate(self.paths):
            if not path:
                raise _invalid(f"paths[{p}]", "expected a non-empty list of link ids")
            seen: set[str] = set()
            for h, hop in enumerate(path):
                if hop in seen:
                    raise _invalid(f"paths[{p}][{h}]", f"link '{hop}' appears twice in one path")
                seen.add(hop)
        if self.rcvbuf == "auto" and self.rcvbuf_bytes is not None:
            raise _invalid(
                "rcvbuf_bytes", 'rcvbuf = "auto" takes rcvbuf_max_bytes, not rcvbuf_bytes'
            )
        if self.rcvbuf == "fixed" and self.rcvbuf_bytes is None:
            raise _invalid("rcvbuf", 'rcvbuf = "fixed" needs rcvbuf_bytes')
        # A cap applies to a buffer that grows; a fixed one would silently ignore it.
        if self.rcvbuf_mode() == "fixed" and self.rcvbuf_max_bytes is not None:
            raise _invalid(
                "rcvbuf_max_bytes",
                "a fixed receive buffer (rcvbuf_bytes) takes no cap; rcvbuf_max_bytes caps "
                'rcvbuf = "auto"',
            )
        if self.sndbuf_bytes is not None and self.sndbuf_max_bytes is not None:
            raise _invalid(
                "sndbuf_max_bytes",
                "a fixed send buffer (sndbuf_bytes) takes no cap; sndbuf_max_bytes caps the "
                "auto-tuned one",
            )
        for name in ("rcvbuf_bytes", "rcvbuf_max_bytes", "sndbuf_bytes", "sndbuf_max_bytes"):
            v = getattr(self, name)
            if v is not None and v < MSS_BYTES:
                raise _invalid(name, f"expected at least one segment ({MSS_BYTES} bytes), got {v}")
            if v is not None and v > MAX_BUFFER_BYTES:
                raise _invalid(
                    name,
                    f"expected at most {MAX_BUFFER_BYTES} bytes (Linux's socket buffer sizes are "
                    f"32-bit ints), got {v}",
                )
        _finite_at_least(self.start_s, 0.0, "start_s", "seconds ≥ 0")
        if self.stop_s is not None and not (
            math.isfinite(self.stop_s) and self.stop_s > self.start_s
        ):
            raise _invalid(
                "stop_s",
                f"expected seconds after start_s ({_num(self.start_s)}), got {_num(self.stop_s)}",
            )
        if self.join_delay_s is not None:
            _finite_at_least(self.join_delay_s, 0.0, "join_delay_s", "seconds ≥ 0")
        return self

    def cc_kind(self) -> CcKind:
        """Effective congestion control (``reno`` for TCP, ``lia`` for MPTCP by default)."""
        if self.cc is not None:
            return self.cc
        return "reno" if self.protocol == "tcp" else "lia"

    def rcvbuf_mode(self) -> BufferMode:
        """Effective receive-buffer mode."""
        if self.rcvbuf is not None:
            return self.rcvbuf
        return "fixed" if self.rcvbuf_bytes is not None else "auto"

    def penalization_mode(self) -> Penalization:
        """Effective penalisation (always ``off`` for TCP)."""
        if self.protocol == "tcp":
            return "off"
        return self.penalization or "conext13"

    def opportunistic_retransmit_enabled(self) -> bool:
        """Effective opportunistic retransmission (never for TCP)."""
        return self.protocol == "mptcp" and (
            True if self.opportunistic_retransmit is None else self.opportunistic_retransmit
        )

    def flow_ids(self) -> list[str]:
        """Ids under which this flow appears in a report."""
        if self.count == 1:
            return [self.id]
        return [f"{self.id}#{k}" for k in range(self.count)]


# ---- the scenario -------------------------------------------------------------------------


class Scenario(_Model):
    """A whole run: links, flows, duration, seed and traces."""

    duration_s: float
    """Simulated length of the run, seconds (> 0)."""
    warmup_s: float = 0.0
    """Measurements (goodput, utilisation) start after this many seconds. Default 0."""
    seed: U64 = 1
    """Seed of the run; every random stream is derived from it. Default 1."""
    links: Annotated[list[LinkSpec], Strict(False)]
    """The links (at least one)."""
    flows: Annotated[list[FlowSpec], Strict(False)]
    """The flows (at least one)."""
    trace: Annotated[list[TraceKind], Strict(False)] = Field(default_factory=list)
    """Time series to record: any of ``cwnd``, ``ssthresh`` (each subflow's slow-start
    threshold, bytes), ``srtt`` (each subflow's smoothed RTT, ms), ``rwnd``, ``queue``,
    ``blocks``. Default none."""
    trace_interval_ms: float = 100.0
    """Sampling interval of the cwnd/ssthresh/srtt/rwnd/queue traces, milliseconds, rounded to
    the clock's nanosecond; at least 1e-6. Default 100."""

    @model_validator(mode="after")
    def _check(self) -> Scenario:
        _positive(self.duration_s, "duration_s", "a duration in seconds")
        if self.duration_s > MAX_DURATION_S:
            raise _invalid(
                "duration_s",
                f"expected a duration of at most {_num(MAX_DURATION_S)} s (the clock counts "
                f"nanoseconds in 64 bits), got {_num(self.duration_s)}",
            )
        if self.duration_s < MIN_DURATION_S:
            raise _invalid(
                "duration_s",
                f"expected a duration of at least {_num(MIN_DURATION_S)} s, "
                f"got {_num(self.duration_s)}",
            )
        _finite_at_least(self.warmup_s, 0.0, "warmup_s", "seconds ≥ 0")
        # What is measured lasts at least as long as the shortest run, or its rates divide by a
        # period that rounds to nothing.
        if self.duration_s - self.warmup_s < MIN_DURATION_S:
            raise _invalid(
                "warmup_s",
                f"expected a warm-up at least {_num(MIN_DURATION_S)} s shorter than duration_s = "
                f"{_num(self.duration_s)} s, got {_num(self.warmup_s)}",
            )
        _positive(self.trace_interval_ms, "trace_interval_ms", "milliseconds")
        if self.trace_interval_ms < MIN_TRACE_INTERVAL_MS:
            raise _invalid(
                "trace_interval_ms",
                f"expected at least {_num(MIN_TRACE_INTERVAL_MS)} ms (the clock's nanosecond), "
                f"got {_num(self.trace_interval_ms)}",
            )
        if not self.links:
            raise _invalid("links", "expected at least one link")
        if not self.flows:
            raise _invalid("flows", "expected at least one flow")
        # Each link's capacity by id: the ids are checked unique and known, the capacities give
        # the most blocks a flow's paths can carry.
        capacities: dict[str, float] = {}
        for i, link in enumerate(self.links):
            if link.id in capacities:
                raise _invalid(f"links[{i}].id", f"link id '{link.id}' is used twice")
            capacities[link.id] = link.capacity_mbps
        known = ", ".join(sorted(capacities))
        flow_ids: set[str] = set()
        flows = subflows = 0
        blocks = 0.0
        for i, flow in enumerate(self.flows):
            if flow.id in flow_ids:
                raise _invalid(f"flows[{i}].id", f"flow id '{flow.id}' is used twice")
            flow_ids.add(flow.id)
            flows += flow.count
            if flows > MAX_FLOWS:
                raise _invalid(
                    f"flows[{i}].count",
                    f"expected at most {MAX_FLOWS} flows in all, got {flows} with this entry",
                )
            subflows += flow.count * len(flow.paths)
            if subflows > MAX_SUBFLOWS:
                raise _invalid(
                    f"flows[{i}].count",
                    f"expected at most {MAX_SUBFLOWS} subflows in all (a path of each flow), "
                    f"got {subflows} with this entry",
                )
            if flow.start_s >= self.duration_s:
                raise _invalid(
                    f"flows[{i}].start_s",
                    f"expected a start before duration_s = {_num(self.duration_s)} s, "
                    f"got {_num(flow.start_s)}",
                )
            for p, path in enumerate(flow.paths):
                for h, hop in enumerate(path):
                    if hop not in capacities:
                        raise _invalid(
                            f"flows[{i}].paths[{p}][{h}]",
                            f"unknown link '{hop}'; links are: {known}",
                        )
            if isinstance(flow.app, BlocksApp):
                blocks += self._blocks_at_most(flow, flow.app.block_bytes, capacities)
                if blocks > MAX_BLOCKS:
                    carried = _num(float(math.ceil(blocks)))
                    raise _invalid(
                        f"flows[{i}].app.block_bytes",
                        f"expected at most {_num(MAX_BLOCKS)} blocks in all (each one's latency "
                        f"is kept), but the paths can carry {carried} with this entry in "
                        "duration_s; use larger blocks",
                    )
        self._check_trace_size()
        return self

    def _blocks_at_most(
        self, flow: FlowSpec, block_bytes: int, capacities: dict[str, float]
    ) -> float:
        """How many blocks of ``block_bytes`` a flow entry could complete in the run
        (scenario.rs, blocks_at_most): its users' paths at their narrowest links' rates
        (``capacities``, Mbit/s by link id)."""
        rate_mbps = 0.0
        for path in flow.paths:
            rate_mbps += min(capacities[hop] for hop in path)
        return float(flow.count) * rate_mbps * 1e6 / 8.0 * self.duration_s / float(block_bytes)

    def _check_trace_size(self) -> None:
        """The sampled traces fit in memory (scenario.rs, validate_trace_size)."""
        connections = float(sum(f.count for f in self.flows))
        subflows = float(sum(f.count * len(f.paths) for f in self.flows))
        per_kind = {
            "cwnd": subflows,
            "ssthresh": subflows,
            "srtt": subflows,
            "rwnd": connections,
            "queue": float(len(self.links)),
        }
        series = sum(per_kind.get(kind, 0.0) for kind in self.trace)
        duration_ms = self.duration_s * 1e3
        ratio = duration_ms / self.trace_interval_ms  # inf for an interval of a few 1e-308
        samples = (math.floor(ratio) if math.isfinite(ratio) else ratio) + 1.0
        if series * samples > MAX_TRACE_VALUES:
            least = duration_ms * series / MAX_TRACE_VALUES
            raise _invalid(
                "trace_interval_ms",
                f"expected at least {_num(least)} ms for these traces ({_num(series)} series "
                f"over {_num(self.duration_s)} s; at most {_num(MAX_TRACE_VALUES)} samples in "
                f"all), got {_num(self.trace_interval_ms)}",
            )

    def to_dict(self) -> dict[str, Any]:
        """Plain data, ``None`` fields left out so the simulator applies its own defaults."""
        # warnings=False: a value assigned with the wrong type after validation is named by
        # the simulator's refusal (mptcplab.sim), not by a serialiser warning before it.
        return self.model_dump(mode="json", exclude_none=True, warnings=False)

    def to_json(self, *, indent: int | None = None) -> str:
        """The JSON document the simulator (``mptcplab._mpsim``) and the emulator read."""
        return json.dumps(self.to_dict(), allow_nan=False, indent=indent)

    def link(self, link_id: str) -> LinkSpec:
        """The link called ``link_id``."""
        for link in self.links:
            if link.id == link_id:
                return link
        raise KeyError(f"no link '{link_id}'; links are: {', '.join(x.id for x in self.links)}")

    def flow(self, flow_id: str) -> FlowSpec:
        """The flow called ``flow_id``."""
        for flow in self.flows:
            if flow.id == flow_id:
                return flow
        raise KeyError(f"no flow '{flow_id}'; flows are: {', '.join(x.id for x in self.flows)}")


# ---- errors -------------------------------------------------------------------------------


@dataclass(frozen=True)
class Issue:
    """One problem in a scenario document."""

    loc: tuple[str | int, ...]
    """Where it is in the document, e.g. ``('links', 0, 'capacity_mbps')``."""
    message: str
    """What was expected (and what was found)."""

    @property
    def field(self) -> str:
        """The location as a dotted path, e.g. ``links[0].capacity_mbps``."""
        return dotted(self.loc)


def dotted(loc: tuple[str | int, ...] | list[str | int]) -> str:
    """``('flows', 0, 'paths', 1)`` → ``flows[0].paths[1]`` (the simulator's notation)."""
    out = ""
    for part in loc:
        if isinstance(part, int):
            out += f"[{part}]"
        else:
            out += f".{part}" if out else str(part)
    return out


def _split_relative(field: str) -> tuple[str | int, ...]:
    from mptcplab.tomlloc import parse_path

    return parse_path(field) if field else ()


_TAGGED_FIELDS = {"queue", "reverse_queue", "app"}
_TAGS = {"droptail", "red", "bulk", "blocks", "size"}


def _document_loc(loc: tuple[str | int, ...]) -> tuple[str | int, ...]:
    """Drop the union tag pydantic inserts after a tagged field (``queue.droptail.ms`` →
    ``queue.ms``), so the location matches the document and the simulator's paths."""
    out: list[str | int] = []
    skip_next = False
    for k, part in enumerate(loc):
        if skip_next:
            skip_next = False
            if part in _TAGS:
                continue
        out.append(part)
        if isinstance(part, str) and part in _TAGGED_FIELDS and k + 1 < len(loc):
            skip_next = True
    return tuple(out)


def _show(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        return repr(value) if math.isfinite(value) else _num(value)
    if isinstance(value, int) and abs(value) >= 10**21:
        # Dozens of digits say less than their first few and their count.
        with contextlib.suppress(OverflowError):
            return _num(float(value))
        digits = str(abs(value))
        mantissa = f"{digits[0]}.{digits[1:7]}".rstrip("0").rstrip(".")
        return f"{'-' if value < 0 else ''}{mantissa}e{len(digits) - 1}"
    if isinstance(value, int | str):
        return json.dumps(value, ensure_ascii=False)
    if isinstance(value, dict):
        return "a table"
    if isinstance(value, list | tuple):
        return "a list"
    return type(value).__name__


def _unwrap(tp: Any) -> list[Any]:
    """The concrete alternatives of an annotation (Annotated, Optional and unions removed)."""
    origin = typing.get_origin(tp)
    if origin is Annotated:
        return _unwrap(typing.get_args(tp)[0])
    if origin is Union or origin is types.UnionType:
        out: list[Any] = []
        for arg in typing.get_args(tp):
            if arg is not type(None):
                out.extend(_unwrap(arg))
        return out
    return [tp]


def _model_at(loc: tuple[str | int, ...], root: type[BaseModel]) -> list[type[BaseModel]]:
    """The model class(es) that a pydantic location (tags included) points into."""
    current: list[Any] = [root]
    for part in loc:
        nxt: list[Any] = []
        for tp in current:
            if isinstance(tp, type) and issubclass(tp, BaseModel):
                if isinstance(part, str) and part in tp.model_fields:
                    nxt.extend(_unwrap(tp.model_fields[part].annotation))
                elif isinstance(part, str) and part in _TAGS:
                    nxt.append(tp)
            elif typing.get_origin(tp) is list and isinstance(part, int):
                nxt.extend(_unwrap(typing.get_args(tp)[0]))
        # A tag selects one member of a union.
        if isinstance(part, str) and part in _TAGS:
            tagged = [t for t in nxt if _tag_of(t) == part]
            nxt = tagged or nxt
        current = nxt
    return [t for t in current if isinstance(t, type) and issubclass(t, BaseModel)]


def _tag_of(tp: Any) -> str | None:
    if isinstance(tp, type) and issubclass(tp, BaseModel) and "kind" in tp.model_fields:
        default = tp.model_fields["kind"].default
        return default if isinstance(default, str) else None
    return None


def _fields_of(models: list[type[BaseModel]]) -> list[str]:
    names: list[str] = []
    for m in models:
        for name in m.model_fields:
            if name not in names:
                names.append(name)
    return names


def _meant(error: Any, root: type[BaseModel]) -> str | None:
    """The field an unknown field's name is closest to, in the same table, if any is close."""
    raw_loc = tuple(error["loc"])
    if not raw_loc:
        return None
    allowed = _fields_of(_model_at(raw_loc[:-1], root))
    close = difflib.get_close_matches(str(raw_loc[-1]), allowed, n=1, cutoff=0.6)
    return close[0] if close else None


def _describe(error: Any, root: type[BaseModel]) -> Issue:
    kind = error["type"]
    raw_loc = tuple(error["loc"])
    loc = _document_loc(raw_loc)
    ctx = error.get("ctx") or {}
    value = error.get("input")
    if kind == "scenario_invalid":
        return Issue((*loc, *_split_relative(ctx["field"])), ctx["message"])
    if kind == "extra_forbidden":
        name = str(raw_loc[-1]) if raw_loc else "?"
        allowed = _fields_of(_model_at(raw_loc[:-1], root))
        msg = f"unknown field '{name}'"
        if allowed:
            close = _meant(error, root)
            if close:
                msg += f" (did you mean '{close}'?)"
            msg += f"; expected one of: {', '.join(allowed)}"
        return Issue(loc, msg)
    if kind == "missing":
        name = str(raw_loc[-1]) if raw_loc else "?"
        models = _model_at(raw_loc[:-1], root)
        desc = ""
        for m in models:
            doc = field_doc(m, name) if name in m.model_fields else None
            if doc:
                # The docstring's literals (``tcp``) read as quoted values in a message.
                desc = doc.split("\n")[0].rstrip(".").replace("``", "'")
                break
        return Issue(loc, f"missing field '{name}'" + (f": {desc}" if desc else ""))
    if kind == "literal_error":
        return Issue(loc, f"expected one of {ctx.get('expected', '?')}, got {_show(value)}")
    if kind == "union_tag_invalid":
        return Issue(
            loc,
            f"unknown {str(ctx.get('discriminator', 'kind')).strip(chr(39))} "
            f"{_show(ctx.get('tag'))}; "
            f"expected one of {ctx.get('expected_tags', '?')}",
        )
    if kind == "union_tag_not_found":
        tags = [t for t in (_tag_of(m) for m in _model_at(raw_loc, root)) if t]
        expected = ", ".join(f"'{t}'" for t in tags) or "?"
        return Issue(loc, f"expected a table with kind = one of {expected}")
    simple = {
        "float_type": "expected a number",
        "float_parsing": "expected a number",
        "int_type": "expected an integer",
        "int_parsing": "expected an integer",
        "int_from_float": "expected an integer",
        "bool_type": "expected true or false",
        "bool_parsing": "expected true or false",
        "string_type": "expected a string",
        "list_type": "expected a list",
        "model_type": "expected a table",
        "model_attributes_type": "expected a table",
        "dict_type": "expected a table",
        "finite_number": "expected a finite number",
    }
    if kind in simple:
        return Issue(loc, f"{simple[kind]}, got {_show(value)}")
    if kind in ("too_short", "too_long"):
        bound = ctx.get("min_length" if kind == "too_short" else "max_length", "?")
        items = "item" if bound == 1 else "items"
        least = "at least" if kind == "too_short" else "at most"
        return Issue(loc, f"expected {least} {bound} {items}, got {ctx.get('actual_length', '?')}")
    if kind in ("greater_than_equal", "greater_than", "less_than_equal", "less_than"):
        sign = {
            "greater_than_equal": "≥",
            "greater_than": ">",
            "less_than_equal": "≤",
            "less_than": "<",
        }[kind]
        bound = next(iter(ctx.values()), "?")
        return Issue(loc, f"expected a value {sign} {bound}, got {_show(value)}")
    return Issue(loc, f"{error.get('msg', 'invalid value')}, got {_show(value)}")


def issues(exc: ValidationError, root: type[BaseModel] = Scenario) -> list[Issue]:
    """The problems in ``exc`` with document locations and messages saying what was expected.

    Unknown fields come first: a misspelt key also makes the intended key "missing", and the
    unknown-field message is the one that names the typo and suggests the fix.
    """
    errors = exc.errors(include_url=False)
    ordered = sorted(errors, key=lambda e: e["type"] != "extra_forbidden")
    # The key a typo was meant to be is reported by the typo's message, not again as missing.
    meant = {
        (*tuple(e["loc"])[:-1], name)
        for e in ordered
        if e["type"] == "extra_forbidden" and (name := _meant(e, root))
    }
    kept = [e for e in ordered if not (e["type"] == "missing" and tuple(e["loc"]) in meant)]
    return [_describe(e, root) for e in kept]

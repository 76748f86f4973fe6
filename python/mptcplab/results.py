"""The report of a run: pydantic mirrors of mpsim's report types (crates/mpsim/src/report.rs).

The simulator writes these through the binding (plus ``wall_s``, the only non-deterministic
field); the emulator writes the same shape and may add blocks of its own (``fidelity``,
``backend``), which are kept as extra fields. ``format_version`` changes whenever a field
changes meaning: a report newer than this code understands is refused with a clear message
(STYLE.md, Flent).
"""

from __future__ import annotations

import json
from typing import Any

from pydantic import BaseModel, ConfigDict, ValidationError

from mptcplab.errors import UserError
from mptcplab.scenario.model import Scenario

__all__ = [
    "FORMAT_VERSION",
    "BlockSeries",
    "FlowReport",
    "LatencySummary",
    "LinkReport",
    "NamedSeries",
    "Report",
    "SubflowReport",
    "Traces",
]

#: The newest report format this code reads (``report::FORMAT_VERSION`` in mpsim).
FORMAT_VERSION = 1


class _Part(BaseModel):
    model_config = ConfigDict(extra="allow")


class LatencySummary(_Part):
    """Latency distribution of the completed blocks of a ``blocks`` application, ms.

    Percentiles are nearest-rank: the value at index round((n − 1)·p) of the sorted latencies,
    a half rounded up (the p50 of two blocks is the later one), from either backend. The pooled
    tables of :mod:`mptcplab.analysis.latency` interpolate between order statistics instead."""

    count: int
    mean_ms: float
    p50_ms: float
    p95_ms: float
    p99_ms: float
    max_ms: float


class SubflowReport(_Part):
    index: int
    path: list[str]
    goodput_mbps: float
    """Payload delivered in order at subflow level over the measurement window, Mbit/s
    (includes copies the connection level later discarded)."""
    bytes_delivered: int
    """Payload delivered in order at subflow level over the whole run, bytes."""
    packets_sent: int
    """Data segments sent, retransmissions included, whole run."""
    retransmits: int
    """Segments retransmitted on this subflow, whole run."""
    fast_retransmits: int
    """Loss recoveries started without a timeout, one per episode, whole run; the emulator can
    only give the retransmitted segments less the timeouts (its report's notes say so)."""
    timeouts: int
    """Retransmission timer expiries, whole run."""
    mean_srtt_ms: float
    """Mean smoothed RTT over the whole run, ms (0 if never sampled)."""
    max_cwnd_bytes: float
    """Largest congestion window of the whole run, bytes."""
    time_to_max_cwnd_s: float
    """Seconds from the subflow's start until its cwnd first reached ``max_cwnd_bytes``."""


class FlowReport(_Part):
    id: str
    """``id``, or ``id#k`` for the k-th of ``count`` identical flows."""
    protocol: str
    cc: str
    goodput_mbps: float
    """Application goodput over the measurement window, Mbit/s."""
    bytes_delivered: int
    """Bytes read by the receiving application over the whole run."""
    retransmits: int
    """Segments retransmitted on their own subflow, whole run."""
    reinjections: int
    """Segments re-sent on another subflow, whole run."""
    penalizations: int
    """Times a slow subflow was penalised, whole run."""
    rwnd_limited_s: float
    """Seconds of the measurement window with data and congestion window but a closed receive
    window."""
    peak_rcvbuf_bytes: int
    """Highest receive-buffer occupancy over the whole run, bytes."""
    final_rcvbuf_bytes: int
    """Receive buffer size at the end of the run, bytes."""
    completion_s: float | None = None
    """``size`` applications: seconds from start to the last byte read, whatever the warm-up;
    None if unfinished."""
    block_latency: LatencySummary | None = None
    """``blocks`` applications: latency of the blocks completed in the measurement window."""
    subflows: list[SubflowReport]


class LinkReport(_Part):
    """The forward direction of a link; every counter covers the measurement window, except
    ``max_queue_packets``."""

    id: str
    utilization: float
    """Fraction of the measurement window the forward direction was transmitting."""
    packets: int
    """Packets admitted for transmission (neither dropped by the queue nor lost)."""
    bytes: int
    drops: int
    """All drops: queue overflow, RED and random loss."""
    queue_drops: int
    red_drops: int
    random_drops: int
    loss_rate: float
    """drops / packets offered to the link."""
    mean_queue_packets: float
    """Time-averaged queue length, packets."""
    max_queue_packets: int
    """Longest queue of the whole run, packets."""


class NamedSeries(_Part):
    name: str
    values: list[float]


class BlockSeries(_Part):
    flow: str
    done_s: list[float]
    latency_ms: list[float]


class Traces(_Part):
    """Time series sampled every ``trace_interval_ms`` (block latencies: one value per block)."""

    time_s: list[float] = []
    cwnd: list[NamedSeries] = []
    """Per ``flow/subflow``, bytes (0 until the subflow is established)."""
    ssthresh: list[NamedSeries] = []
    """Per ``flow/subflow``, the slow-start threshold, bytes (0 while none is set: before the
    first window reduction)."""
    srtt: list[NamedSeries] = []
    """Per ``flow/subflow``, the sender's smoothed RTT, ms (0 before its first sample)."""
    rwnd: list[NamedSeries] = []
    """Advertised receive window per flow, bytes (0 before the connection's handshake)."""
    queue: list[NamedSeries] = []
    """Queue length per link, packets."""
    blocks: list[BlockSeries] = []


class Report(_Part):
    """Everything a run produced, with the scenario and seed that produced it."""

    format_version: int
    mpsim_version: str
    scenario: Scenario
    seed: int
    measured_s: float
    """Seconds over which rates were measured (duration − warm-up): the measured window. Each
    field says whether it covers that window or the whole run; a warm-up changes only the
    former."""
    events: int
    """Events processed by the engine."""
    packets_delivered: int
    """Packets delivered to their final hop (data and ACKs)."""
    data_packets_delivered: int | None = None
    """Data packets delivered to their receiver (None in reports that do not count them)."""
    flows: list[FlowReport]
    links: list[LinkReport]
    traces: Traces | None = None
    wall_s: float | None = None
    """Wall-clock seconds the run took (added by the binding, not deterministic)."""

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Report:
        """Read a report; a newer ``format_version`` than :data:`FORMAT_VERSION` is refused."""
        version = data.get("format_version") if isinstance(data, dict) else None
        if isinstance(version, int) and version > FORMAT_VERSION:
            raise UserError(
                f"report format {version} is newer than this mptcplab reads "
                f"({FORMAT_VERSION}); upgrade mptcplab",
                field="format_version",
            )
        try:
            return cls.model_validate(data)
        except ValidationError as exc:
            first = exc.errors(include_url=False)[0]
            where = ".".join(str(p) for p in first["loc"])
            raise UserError(f"not a report: {first['msg']}", field=where or None) from None

    @classmethod
    def from_json(cls, text: str) -> Report:
        try:
            data = json.loads(text)
        except json.JSONDecodeError as exc:
            raise UserError(f"not a report: invalid JSON ({exc.msg})", line=exc.lineno) from None
        return cls.from_dict(data)

    def flow(self, flow_id: str) -> FlowReport:
        """The flow called ``flow_id`` (``id#k`` for one of ``count`` identical flows)."""
        for f in self.flows:
            if f.id == flow_id:
                return f
        known = ", ".join(f.id for f in self.flows)
        raise KeyError(f"no flow '{flow_id}' in this report; flows are: {known}")

    def group(self, flow_id: str) -> list[FlowReport]:
        """All flows of the scenario entry ``flow_id``: itself, or ``flow_id#0`` … when it had
        ``count`` > 1."""
        out = [f for f in self.flows if f.id == flow_id or f.id.startswith(f"{flow_id}#")]
        if not out:
            known = ", ".join(f.id for f in self.flows)
            raise KeyError(f"no flow '{flow_id}' in this report; flows are: {known}")
        return out

    def link(self, link_id: str) -> LinkReport:
        """The link called ``link_id``."""
        for link in self.links:
            if link.id == link_id:
                return link
        known = ", ".join(x.id for x in self.links)
        raise KeyError(f"no link '{link_id}' in this report; links are: {known}")

    def to_dict(self) -> dict[str, Any]:
        """Plain data in the simulator's layout (absent traces left out, as mpsim does)."""
        data = self.model_dump(mode="json")
        if data.get("traces") is None:
            data.pop("traces", None)
        for optional in ("wall_s", "data_packets_delivered"):
            if data.get(optional) is None:
                data.pop(optional, None)
        data["scenario"] = self.scenario.to_dict()
        return data

    def to_json(self, *, indent: int | None = None) -> str:
        return json.dumps(self.to_dict(), indent=indent, allow_nan=False)

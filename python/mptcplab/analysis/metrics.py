"""Metrics of a run: the published formulas, and their extraction from a backend's report.

Sources:
- aggregation benefit: Kaspar's definition as used by Paasch, Khalili, Bonaventure, "On the
  Benefits of Applying Experimental Design to Improve Multipath TCP", CoNEXT 2013, §4.1
  (spec/algorithms.md §5.1);
- Jain's fairness index: Jain, Chiu, Hawe, DEC-TR-301 (1984) (spec §5.2);
- log gain: Dreibholz, Zhou, Fa, NorNet Core MPTCP study (spec §5.3); the base (natural log)
  and the reference (best single path) are this project's choice (spec §8 item 10).

Run metrics are computed from the report dictionary (crates/mpsim/src/report.rs) and the scenario
dictionary the run was given, so a stored run can be re-analysed without re-running it. Metrics
that need the single-path TCP reference runs of the same point (measured C_i) are computed by the
analysis layer, which has those runs at hand; they are listed in ``REFERENCE_METRICS``.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

from mptcplab.analysis._checks import as_mapping, is_number, listed

if TYPE_CHECKING:
    from mptcplab import results
    from mptcplab.scenario import model

# A full segment carries 1448 payload bytes in a 1500-byte packet (crates/mpsim/src/scenario.rs,
# MSS_BYTES and HEADER_BYTES): the best goodput a link of capacity C can give is C · 1448/1500.
MSS_BYTES = 1448
HEADER_BYTES = 52
PAYLOAD_FRACTION = MSS_BYTES / (MSS_BYTES + HEADER_BYTES)

Report = Mapping[str, Any]
Scenario = Mapping[str, Any]


def aggregation_benefit(goodput: float, capacities: Sequence[float]) -> float:
    """Kaspar's aggregation benefit of a multipath goodput over paths of capacities ``C_i``.

    ``Ben = (g − C_max) / (Σ C_i − C_max)`` when ``g ≥ C_max``, else ``(g − C_max) / C_max``:
    1 means the paths were perfectly aggregated, 0 as good as the best path alone, −1 nothing
    delivered. When the other paths add nothing (``Σ C_i = C_max``) and ``g ≥ C_max`` the value
    is 0 (spec §5.1 guard). With measured ``C_i`` the value may leave [−1, 1]; it is not clipped.
    """
    caps = [float(c) for c in listed(capacities, "capacities", "path capacities")]
    if not caps:
        raise ValueError("capacities: expected at least one path capacity")
    if any(not math.isfinite(c) or c < 0 for c in caps):
        raise ValueError(f"capacities: expected finite values >= 0, got {caps}")
    _check_goodput(goodput, "goodput", nan=False)
    c_max = max(caps)
    if goodput >= c_max:
        others = sum(caps) - c_max
        if others <= 0:
            return 0.0
        return (goodput - c_max) / others
    return (goodput - c_max) / c_max


def _check_goodput(value: Any, argument: str, *, nan: bool) -> None:
    """A goodput argument: a finite number >= 0, or with ``nan`` also NaN (not measured)."""
    if not is_number(value) or not (
        (math.isfinite(value) and value >= 0) or (nan and math.isnan(value))
    ):
        allowed = " (or NaN)" if nan else ""
        raise ValueError(f"{argument}: expected a finite value >= 0{allowed}, got {value!r}")


# Shares beyond these are scaled by the largest before squaring: their squares (and the square
# of their sum, over many shares) would overflow, or underflow to zero.
_JAIN_UNSCALED = (1e-100, 1e100)


def jain_index(values: Sequence[float]) -> float:
    """Jain's fairness index ``(Σ x)² / (n Σ x²)``, in [1/n, 1]; NaN when every share is zero."""
    xs = [float(x) for x in listed(values, "values", "shares")]
    if not xs:
        raise ValueError("values: expected at least one share")
    if any(not math.isfinite(x) or x < 0 for x in xs):
        raise ValueError(f"values: expected finite shares >= 0, got {xs}")
    largest = max(xs)
    if largest == 0:
        return math.nan
    low, high = _JAIN_UNSCALED
    if not low < largest < high:
        # The index does not depend on the unit of the shares.
        xs = [x / largest for x in xs]
    squares = sum(x * x for x in xs)
    return sum(xs) ** 2 / (len(xs) * squares)


def log_gain(mptcp_goodput: float, tcp_goodput: float) -> float:
    """``ln(MPTCP goodput / TCP goodput)``: 0 = no gain, ln 2 ≈ 0.69 = twice as fast.

    Each goodput is a finite number >= 0, or NaN where it was not measured. −inf where MPTCP
    delivered nothing and TCP did: a run worse than any other, not a missing one (leaving it out
    would make the point's median that of the runs that worked). NaN where TCP delivered nothing
    (there is no ratio) or either goodput is NaN.
    """
    _check_goodput(mptcp_goodput, "mptcp_goodput", nan=True)
    _check_goodput(tcp_goodput, "tcp_goodput", nan=True)
    if math.isnan(mptcp_goodput) or not tcp_goodput > 0:
        return math.nan
    if mptcp_goodput == 0:
        return -math.inf
    return math.log(mptcp_goodput / tcp_goodput)


#: NorNet's "critical configurations" (spec §5.3): MPTCP below 97.5 % of TCP, the 2.5 %
#: allowing for MPTCP's option overhead; they are told apart as ≥ 80 %, 50–80 % and < 50 %.
CRITICAL_RATIO = 0.975
CRITICAL_CLASSES = ("≥ 80 %", "50–80 %", "< 50 %")


def critical_class(ratio: float) -> str | None:
    """The class of an MPTCP/TCP goodput ratio below :data:`CRITICAL_RATIO`; None above it
    (and for NaN: a ratio that was not measured is not critical)."""
    if not ratio < CRITICAL_RATIO:
        return None
    if ratio >= 0.8:
        return CRITICAL_CLASSES[0]
    return CRITICAL_CLASSES[1] if ratio >= 0.5 else CRITICAL_CLASSES[2]


# --- extraction from a report ------------------------------------------------------------------


def _base_id(flow_id: str) -> str:
    """``id#k`` names the k-th of ``count`` identical flows (report.rs)."""
    return flow_id.split("#", 1)[0]


def path_capacities_mbps(scenario: Scenario, flow_id: str) -> list[float]:
    """Best goodput of each path of a flow on its own: the narrowest link's capacity, payload part.

    Paths that share a link are each credited with that link's full capacity, so the sum
    over-states what the paths can carry together; use measured single-path references there.
    """
    links = {link["id"]: float(link["capacity_mbps"]) for link in scenario["links"]}
    flow = next(f for f in scenario["flows"] if f["id"] == _base_id(flow_id))
    return [min(links[hop] for hop in path) * PAYLOAD_FRACTION for path in flow["paths"]]


def _mptcp_flows(report: Report) -> list[Mapping[str, Any]]:
    return [f for f in report["flows"] if f["protocol"] == "mptcp"]


def app_kind(flow: Mapping[str, Any]) -> str:
    """The kind of a flow spec's application: ``bulk`` (the default), ``blocks`` or ``size``."""
    return str(flow.get("app", {"kind": "bulk"})["kind"])


def _is_bulk(flow: Mapping[str, Any]) -> bool:
    """A flow spec whose application always has data (the default)."""
    return app_kind(flow) == "bulk"


def _goodput(report: Report, _scenario: Scenario) -> float:
    return float(sum(f["goodput_mbps"] for f in report["flows"]))


def _goodput_bound_ratio(report: Report, scenario: Scenario) -> float | None:
    """All flows' goodput over the most they could get together: for greedy (bulk) flows that
    are all active through the measurement only."""
    from mptcplab.analysis.capacity_bound import max_total_goodput
    from mptcplab.analysis.fairshare import shares_compare_with_goodput

    if not shares_compare_with_goodput(scenario):
        return None
    return _goodput(report, scenario) / max_total_goodput(scenario)


def _mptcp_goodput(report: Report, _scenario: Scenario) -> float | None:
    flows = _mptcp_flows(report)
    return float(sum(f["goodput_mbps"] for f in flows)) if flows else None


def active_through_window(flow: Mapping[str, Any], scenario: Scenario) -> bool:
    """Whether a flow spec runs through the whole measurement window: ``start_s`` at most
    ``warmup_s``, no ``stop_s``."""
    warmup = float(scenario.get("warmup_s", 0.0))
    return float(flow.get("start_s", 0.0)) <= warmup and flow.get("stop_s") is None


def greedy_through_window(flow: Mapping[str, Any], scenario: Scenario) -> bool:
    """Whether a flow spec always has data and runs through the whole measurement window: then
    its goodput over the window is what it could get."""
    return _is_bulk(flow) and active_through_window(flow, scenario)


def _aggregation_benefit_configured(report: Report, scenario: Scenario) -> float | None:
    """The mean over the MPTCP flows, when every one is greedy through the measurement: Kaspar's
    measure (CoNEXT 2013 §4.1) sets a bulk transfer's goodput beside the paths' capacities; a
    finite transfer, a block writer or a flow present for part of the window has a goodput over
    the window that says nothing of how well it aggregated."""
    flows = _mptcp_flows(report)
    specs = {f["id"]: f for f in scenario["flows"]}
    if not flows or not all(
        greedy_through_window(specs[_base_id(f["id"])], scenario) for f in flows
    ):
        return None
    values = [
        aggregation_benefit(f["goodput_mbps"], path_capacities_mbps(scenario, f["id"]))
        for f in flows
    ]
    return sum(values) / len(values)


def _jain(report: Report, scenario: Scenario) -> float | None:
    """Over the bulk flows, when every flow is active through the measurement: Jain's index
    compares what users that all want as much as they can get receive (Jain, Chiu & Hawe
    1984). A finite transfer's or a block writer's goodput is what it asked for, and a flow
    that started late or left early had part of the window only: neither is a share."""
    from mptcplab.analysis.fairshare import compares_with_goodput

    if not compares_with_goodput(scenario):
        return None
    bulk = {f["id"] for f in scenario["flows"] if _is_bulk(f)}
    goodputs = [f["goodput_mbps"] for f in report["flows"] if _base_id(f["id"]) in bulk]
    if len(goodputs) < 2:
        return None
    value = jain_index(goodputs)
    return None if math.isnan(value) else value


def _time_to_max_cwnd(report: Report, _scenario: Scenario) -> float | None:
    subflows = [s for f in report["flows"] for s in f["subflows"]]
    if not subflows:
        return None
    fastest = max(subflows, key=lambda s: s["goodput_mbps"])
    return float(fastest["time_to_max_cwnd_s"])


def _path0_share(report: Report, _scenario: Scenario) -> float | None:
    # Subflow goodputs, not the connection's: the split is of what each path carried.
    subflows = [s for f in _mptcp_flows(report) for s in f["subflows"]]
    total = sum(float(s["goodput_mbps"]) for s in subflows)
    if total <= 0:
        return None
    return sum(float(s["goodput_mbps"]) for s in subflows if s["index"] == 0) / total


def _fair_share_ratios(by_group: bool) -> Callable[[Report, Scenario], float | None]:
    """The lowest goodput / max-min fair share of a bulk flow, or with ``by_group`` of a flow
    entry's mean over its ``count`` flows (a user class, as the draft-khalili tables report)."""

    def extract(report: Report, scenario: Scenario) -> float | None:
        # Imported here: fairshare takes this module's payload constants.
        from mptcplab.analysis.fairshare import fair_share, shares_compare_with_goodput

        if not shares_compare_with_goodput(scenario):
            return None
        goodputs: dict[str, list[float]] = {}
        for f in report["flows"]:
            key = _base_id(f["id"]) if by_group else f["id"]
            goodputs.setdefault(key, []).append(float(f["goodput_mbps"]))
        if not goodputs:
            return None
        share = fair_share(scenario)
        return min(sum(g) / len(g) / share.of(key) for key, g in goodputs.items())

    return extract


def _block_latency(field: str) -> Callable[[Report, Scenario], float | None]:
    """The worst flow's block latency; infinite when a flow that went on writing blocks past
    the warm-up completed none after it (starved: its latency is longer than the run shows),
    as an unfinished transfer's completion time is."""

    def extract(report: Report, scenario: Scenario) -> float | None:
        warmup = float(scenario.get("warmup_s", 0.0))
        writing = {
            f["id"]
            for f in scenario["flows"]
            if app_kind(f) == "blocks" and (f.get("stop_s") is None or f["stop_s"] > warmup)
        }
        values = []
        for f in report["flows"]:
            if f.get("block_latency"):
                values.append(float(f["block_latency"][field]))
            elif _base_id(f["id"]) in writing:
                values.append(math.inf)
        return max(values) if values else None

    return extract


BLOCKS_UNFINISHED = "a flow writing blocks completed none after the warm-up"


def _completion(report: Report, scenario: Scenario) -> float | None:
    """The finite transfers' (``size`` applications') slowest completion; infinite if one of
    them did not complete in the run, none without finite transfers. Bulk or block flows beside
    them are cross traffic."""
    finite = {f["id"] for f in scenario["flows"] if app_kind(f) == "size"}
    values = [f.get("completion_s") for f in report["flows"] if _base_id(f["id"]) in finite]
    if not values:
        return None
    return max(math.inf if v is None else v for v in values)


def _flows_max(field: str) -> Callable[[Report, Scenario], float | None]:
    def extract(report: Report, _scenario: Scenario) -> float | None:
        return max((float(f[field]) for f in report["flows"]), default=None)

    return extract


def _flows_sum(field: str) -> Callable[[Report, Scenario], float | None]:
    def extract(report: Report, _scenario: Scenario) -> float | None:
        return float(sum(f[field] for f in report["flows"]))

    return extract


def _links_max(field: str) -> Callable[[Report, Scenario], float | None]:
    def extract(report: Report, _scenario: Scenario) -> float | None:
        return max((float(link[field]) for link in report["links"]), default=None)

    return extract


@dataclass(frozen=True)
class MetricInfo:
    """A metric's name, meaning and unit; ``bounds`` is its theoretical range when it has one
    (the report flags point medians outside it). The sensitivity analysis divides by the observed
    range of the metric in every case."""

    name: str
    description: str
    unit: str = ""
    bounds: tuple[float, float] | None = None
    # Lower is worse (goodput) unless this is False (latency): decides which points are "worst".
    # None: a split of traffic, where neither end is better; it ranks no points.
    higher_is_better: bool | None = True
    # For a time until something happens: what an infinite value says, that it had not happened
    # when the run ended (see mptcplab.analysis.unfinished). Empty: the metric is never +inf.
    unfinished: str = ""
    # What a value of −inf says (log_gain: MPTCP delivered nothing). Empty: it is never −inf.
    stalled: str = ""


@dataclass(frozen=True)
class RunMetric:
    info: MetricInfo
    extract: Callable[[Report, Scenario], float | None]


RUN_METRICS: dict[str, RunMetric] = {
    m.info.name: m
    for m in (
        RunMetric(MetricInfo("goodput_mbps", "goodput of all flows together", "Mbit/s"), _goodput),
        RunMetric(
            MetricInfo("mptcp_goodput_mbps", "goodput of the MPTCP flows", "Mbit/s"),
            _mptcp_goodput,
        ),
        RunMetric(
            MetricInfo(
                "goodput_bound_ratio",
                "goodput of all flows over the most the links can carry for them together "
                "(CoNEXT 2013's congestion-balancing metric; bulk flows only)",
                bounds=(0.0, 1.0),
            ),
            _goodput_bound_ratio,
        ),
        RunMetric(
            MetricInfo(
                "aggregation_benefit",
                "aggregation benefit of the MPTCP flows, C_i = configured path capacity "
                "(payload share 1448/1500 of the narrowest link)",
                bounds=(-1.0, 1.0),
            ),
            _aggregation_benefit_configured,
        ),
        RunMetric(
            MetricInfo(
                "path0_share",
                "share of the MPTCP flows' subflow goodput carried on their first path (path 0)",
                bounds=(0, 1),
                higher_is_better=None,
            ),
            _path0_share,
        ),
        RunMetric(
            MetricInfo("jain_fairness", "Jain's index of the bulk flows' goodputs", bounds=(0, 1)),
            _jain,
        ),
        RunMetric(
            MetricInfo(
                "worst_fair_share_ratio",
                "lowest ratio of a bulk flow's goodput to its max-min fair share (multipath "
                "users pooling their paths; link capacities only)",
            ),
            _fair_share_ratios(by_group=False),
        ),
        RunMetric(
            MetricInfo(
                "worst_group_fair_share_ratio",
                "lowest ratio of a flow entry's mean goodput over its count flows (a user class) "
                "to their max-min fair share",
            ),
            _fair_share_ratios(by_group=True),
        ),
        RunMetric(
            MetricInfo(
                "time_to_max_cwnd_s",
                "time for the fastest subflow's cwnd to reach its maximum",
                "s",
                higher_is_better=False,
            ),
            _time_to_max_cwnd,
        ),
        RunMetric(
            MetricInfo(
                "peak_rcvbuf_bytes",
                "largest receive-buffer occupancy of any flow",
                "bytes",
                # Memory the receiver had to hold (the CoNEXT 2013 concern): the most is the worst.
                higher_is_better=False,
            ),
            _flows_max("peak_rcvbuf_bytes"),
        ),
        RunMetric(
            MetricInfo(
                "rwnd_limited_s",
                "longest time any flow was held back by the receive window",
                "s",
                higher_is_better=False,
            ),
            _flows_max("rwnd_limited_s"),
        ),
        RunMetric(
            MetricInfo("retransmits", "segments retransmitted, all flows", higher_is_better=False),
            _flows_sum("retransmits"),
        ),
        RunMetric(
            MetricInfo(
                "reinjections", "segments re-sent on another subflow", higher_is_better=False
            ),
            _flows_sum("reinjections"),
        ),
        RunMetric(
            MetricInfo(
                "max_loss_rate",
                "highest drop rate of any link",
                bounds=(0, 1),
                higher_is_better=False,
            ),
            _links_max("loss_rate"),
        ),
        RunMetric(
            MetricInfo(
                "max_mean_queue_packets",
                "highest mean queue length of any link",
                "packets",
                higher_is_better=False,
            ),
            _links_max("mean_queue_packets"),
        ),
        RunMetric(
            MetricInfo(
                "block_latency_p50_ms",
                "median application block latency, nearest rank (worst flow)",
                "ms",
                higher_is_better=False,
                unfinished=BLOCKS_UNFINISHED,
            ),
            _block_latency("p50_ms"),
        ),
        RunMetric(
            MetricInfo(
                "block_latency_p95_ms",
                "95th percentile block latency, nearest rank (worst flow)",
                "ms",
                higher_is_better=False,
                unfinished=BLOCKS_UNFINISHED,
            ),
            _block_latency("p95_ms"),
        ),
        RunMetric(
            MetricInfo(
                "completion_s",
                "time to complete the slowest finite transfer",
                "s",
                higher_is_better=False,
                unfinished="a finite transfer did not complete within the run",
            ),
            _completion,
        ),
    )
}

REFERENCE_METRICS: dict[str, MetricInfo] = {
    m.name: m
    for m in (
        MetricInfo(
            "aggregation_benefit_measured",
            "aggregation benefit with C_i = measured single-path TCP goodput of each path",
            bounds=(-1.0, 1.0),
        ),
        MetricInfo(
            "log_gain",
            "ln(MPTCP goodput / best single-path TCP goodput), measured references",
            stalled="MPTCP delivered nothing while single-path TCP did",
        ),
    )
}


# --- metrics of one flow entry (a user class) -------------------------------------------------
#
# ``user_goodput_mbps.<flow>`` and ``fair_share_mbps.<flow>`` name one flow entry of the scenario
# (its ``count`` flows are that many users): the per-user figures the draft-khalili tables give,
# computed for every flow entry of every run.

FLOW_PLACEHOLDER = "<flow>"


def _entry_goodputs(report: Report, flow: str) -> list[float]:
    return [float(f["goodput_mbps"]) for f in report["flows"] if _base_id(f["id"]) == flow]


def _user_goodput(report: Report, scenario: Scenario, flow: str) -> float | None:
    goodputs = _entry_goodputs(report, flow)
    return sum(goodputs) / len(goodputs) if goodputs else None


def _group_goodput(report: Report, scenario: Scenario, flow: str) -> float | None:
    goodputs = _entry_goodputs(report, flow)
    return sum(goodputs) if goodputs else None


def _user_fair_share(report: Report, scenario: Scenario, flow: str) -> float | None:
    from mptcplab.analysis.fairshare import fair_share, shares_compare_with_goodput

    if not shares_compare_with_goodput(scenario):
        return None
    return fair_share(scenario).per_flow_mbps.get(flow)


def _user_fair_share_with_probing(report: Report, scenario: Scenario, flow: str) -> float | None:
    from mptcplab.analysis.fairshare import (
        InfeasibleFloors,
        fair_share,
        probing_floors,
        shares_compare_with_goodput,
    )

    if not shares_compare_with_goodput(scenario):
        return None
    floors = probing_floors(report, scenario)
    if floors is None:
        return None
    try:
        return fair_share(scenario, floors).per_flow_mbps.get(flow)
    except InfeasibleFloors:
        return None


def _cwnd_recovery(report: Report, scenario: Scenario, flow: str) -> float | None:
    from mptcplab.analysis.recovery import cwnd_recovery_s

    return cwnd_recovery_s(report, scenario, flow)


@dataclass(frozen=True)
class FlowMetric:
    """A metric of each flow entry: ``info.name`` is ``prefix.<flow>``."""

    prefix: str
    info: MetricInfo
    extract: Callable[[Report, Scenario, str], float | None]

    def named(self, flow: str) -> MetricInfo:
        description = self.info.description.replace(FLOW_PLACEHOLDER, repr(flow))
        return replace(self.info, name=f"{self.prefix}.{flow}", description=description)


FLOW_METRICS: dict[str, FlowMetric] = {
    m.prefix: m
    for m in (
        FlowMetric(
            "user_goodput_mbps",
            MetricInfo(
                f"user_goodput_mbps.{FLOW_PLACEHOLDER}",
                f"mean goodput of a user of flow entry {FLOW_PLACEHOLDER} (over its count flows)",
                "Mbit/s",
            ),
            _user_goodput,
        ),
        FlowMetric(
            "group_goodput_mbps",
            MetricInfo(
                f"group_goodput_mbps.{FLOW_PLACEHOLDER}",
                f"goodput of all the users of flow entry {FLOW_PLACEHOLDER} together",
                "Mbit/s",
            ),
            _group_goodput,
        ),
        FlowMetric(
            "fair_share_mbps",
            MetricInfo(
                f"fair_share_mbps.{FLOW_PLACEHOLDER}",
                f"max-min fair share of a user of flow entry {FLOW_PLACEHOLDER} (multipath users "
                "pooling their paths; link capacities only)",
                "Mbit/s",
                higher_is_better=None,
            ),
            _user_fair_share,
        ),
        FlowMetric(
            "fair_share_probing_mbps",
            MetricInfo(
                f"fair_share_probing_mbps.{FLOW_PLACEHOLDER}",
                f"max-min fair share of a user of flow entry {FLOW_PLACEHOLDER} when every path "
                "of a multipath user carries at least one segment per measured RTT "
                "(draft-khalili's optimum with probing cost)",
                "Mbit/s",
                higher_is_better=None,
            ),
            _user_fair_share_with_probing,
        ),
        FlowMetric(
            "cwnd_recovery_s",
            MetricInfo(
                f"cwnd_recovery_s.{FLOW_PLACEHOLDER}",
                f"seconds after the flows sharing a path of {FLOW_PLACEHOLDER} stop (stop_s) "
                "until that subflow's window is back at its mean from before they started "
                '(needs trace = ["cwnd"])',
                "s",
                higher_is_better=False,
                unfinished="a window did not regain its mean before the run ended",
            ),
            _cwnd_recovery,
        ),
    )
}


def flow_metric(name: str) -> tuple[FlowMetric, str] | None:
    """The family and flow entry of a name such as ``user_goodput_mbps.type2``, else None."""
    prefix, dot, flow = name.partition(".")
    family = FLOW_METRICS.get(prefix)
    if family is None or not dot or not flow or "#" in flow:
        return None
    return family, flow


def unknown_flow_entry(name: str, flows: Iterable[str]) -> str | None:
    """Why the flow-entry metric ``name`` cannot be had from scenarios whose flow entries are
    ``flows``; None when it can, or is no flow-entry metric."""
    found = flow_metric(name)
    known = sorted(set(flows))
    if found is None or found[1] in known:
        return None
    return (
        f"metric '{name}' names flow entry '{found[1]}', which the campaign's scenarios do not "
        f"have; their flow entries: {', '.join(known)}"
    )


def is_metric_name(name: str) -> bool:
    """A run metric, a reference metric, or a flow-entry metric naming some flow entry."""
    return name in RUN_METRICS or name in REFERENCE_METRICS or flow_metric(name) is not None


def metric_info(name: str) -> MetricInfo:
    if name in RUN_METRICS:
        return RUN_METRICS[name].info
    if name in REFERENCE_METRICS:
        return REFERENCE_METRICS[name]
    found = flow_metric(name)
    if found is not None:
        family, flow = found
        return family.info if flow == FLOW_PLACEHOLDER else family.named(flow)
    raise KeyError(name)


def all_metric_names() -> list[str]:
    """Every metric, the flow-entry ones written with ``<flow>`` for the entry's id."""
    return [*RUN_METRICS, *(m.info.name for m in FLOW_METRICS.values()), *REFERENCE_METRICS]


def run_metrics(
    report: Report | results.Report, scenario: Scenario | model.Scenario
) -> dict[str, float]:
    """Every run metric that applies to this report, and the flow-entry metrics of each of the
    scenario's flow entries (non-applicable ones are left out). ``report``: what
    :func:`mptcplab.sim.run` returns, or its dictionary; ``scenario``: a Scenario or its
    dictionary."""
    report = as_mapping(report, "report", "Report")
    scenario = as_mapping(scenario, "scenario", "Scenario")
    values: dict[str, float] = {}
    for name, metric in RUN_METRICS.items():
        value = metric.extract(report, scenario)
        if _kept(value, metric.info):
            values[name] = float(value)  # type: ignore[arg-type]
    for family in FLOW_METRICS.values():
        for flow in scenario.get("flows", ()):
            value = family.extract(report, scenario, flow["id"])
            if _kept(value, family.info):
                values[f"{family.prefix}.{flow['id']}"] = float(value)  # type: ignore[arg-type]
    return values


def _kept(value: float | None, info: MetricInfo) -> bool:
    """A finite value, the infinity of a time that ran past the run's end, or the −inf of a
    metric that says so."""
    if value is None:
        return False
    return (
        math.isfinite(value)
        or (value == math.inf and bool(info.unfinished))
        or (value == -math.inf and bool(info.stalled))
    )


def reference_metrics(mptcp_goodput: float, path_goodputs: Sequence[float]) -> dict[str, float]:
    """Metrics that compare an MPTCP run with single-path TCP runs over each of its paths."""
    values = {"aggregation_benefit_measured": aggregation_benefit(mptcp_goodput, path_goodputs)}
    gain = log_gain(mptcp_goodput, max(path_goodputs))
    if _kept(gain, REFERENCE_METRICS["log_gain"]):
        values["log_gain"] = gain
    return values

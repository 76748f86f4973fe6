"""What a metric needs of a scenario to have a value at all, checked before anything runs.

A run metric has no value for a run whose scenario lacks what it measures (block latency
without a ``blocks`` application, the aggregation benefit without an MPTCP flow, ...): the
store records a blank for it. A campaign, or ``compare -m``, naming a metric that no scenario
of its runs can give would otherwise run (or compare) for a column of blanks; one that some
variants can give (MPTCP against TCP levels) is fine.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from mptcplab.analysis._checks import as_mapping
from mptcplab.analysis.metrics import app_kind, greedy_through_window

if TYPE_CHECKING:
    from mptcplab.scenario import model

__all__ = ["FLOW_NEEDS", "NEEDS", "FlowNeed", "Need", "need_of", "unmet_need"]

Scenario = Mapping[str, Any]


@dataclass(frozen=True)
class Need:
    """``what`` completes "metric 'X' needs ..."; ``met`` says whether a scenario has it."""

    what: str
    met: Callable[[Scenario], bool]


def _all_active(scenario: Scenario) -> bool:
    # Imported here: fairshare imports numpy, which the command line does not pay for unless
    # it draws fair shares.
    from mptcplab.analysis.fairshare import compares_with_goodput

    return compares_with_goodput(scenario)


def _greedy(scenario: Scenario) -> bool:
    from mptcplab.analysis.fairshare import shares_compare_with_goodput  # numpy, as above

    return shares_compare_with_goodput(scenario)


def _has_app(scenario: Scenario, kind: str) -> bool:
    return any(app_kind(f) == kind for f in scenario["flows"])


_THROUGH = "active through the measurement (start_s at most warmup_s, no stop_s)"
_ACTIVE = f"every flow {_THROUGH}"
_MPTCP = Need(
    'an MPTCP flow (protocol = "mptcp")',
    lambda s: any(f.get("protocol") == "mptcp" for f in s["flows"]),
)
_BLOCKS = Need('a flow writing blocks (app = { kind = "blocks" })', lambda s: _has_app(s, "blocks"))
_GREEDY = Need(f"bulk flows only, {_ACTIVE}", _greedy)

NEEDS: dict[str, Need] = {
    "mptcp_goodput_mbps": _MPTCP,
    "aggregation_benefit": Need(
        f'an MPTCP flow (protocol = "mptcp"), every one a bulk flow {_THROUGH}',
        lambda s: (
            _MPTCP.met(s)
            and all(greedy_through_window(f, s) for f in s["flows"] if f.get("protocol") == "mptcp")
        ),
    ),
    "aggregation_benefit_measured": _MPTCP,
    "log_gain": _MPTCP,
    "path0_share": _MPTCP,
    "jain_fairness": Need(
        f"two bulk flows or more, {_ACTIVE}",
        lambda s: (
            sum(int(f.get("count", 1)) for f in s["flows"] if app_kind(f) == "bulk") >= 2
            and _all_active(s)
        ),
    ),
    "goodput_bound_ratio": _GREEDY,
    "worst_fair_share_ratio": _GREEDY,
    "block_latency_p50_ms": _BLOCKS,
    "block_latency_p95_ms": _BLOCKS,
    "completion_s": Need(
        'a finite transfer (app = { kind = "size", ... })', lambda s: _has_app(s, "size")
    ),
}
NEEDS["worst_group_fair_share_ratio"] = NEEDS["worst_fair_share_ratio"]


@dataclass(frozen=True)
class FlowNeed:
    """A need of a metric of one flow entry (``fair_share_mbps.type2``): ``met(scenario,
    entry)``."""

    what: str
    met: Callable[[Scenario, str], bool]


def _recovers(scenario: Scenario, entry: str) -> bool:
    from mptcplab.analysis.recovery import leaving_flows  # numpy, as above

    spec = next((f for f in scenario["flows"] if f["id"] == entry), None)
    if spec is None or "cwnd" not in scenario.get("trace", ()):
        return False
    # The window's reference is its mean between the warm-up and the others' start.
    warmup = float(scenario.get("warmup_s", 0.0))
    for leaving in leaving_flows(scenario, entry):
        if leaving and min(float(o.get("start_s", 0.0)) for o in leaving) > warmup:
            return True
    return False


_SHARES = FlowNeed(_GREEDY.what, lambda s, _entry: _GREEDY.met(s))

#: By family (the name's part before the dot).
FLOW_NEEDS: dict[str, FlowNeed] = {
    "fair_share_mbps": _SHARES,
    "fair_share_probing_mbps": _SHARES,
    "cwnd_recovery_s": FlowNeed(
        'the cwnd trace (trace = ["cwnd"]) and other flow entries on a link of its paths that '
        "start after the warm-up (start_s) and stop (stop_s)",
        _recovers,
    ),
}


def need_of(name: str) -> str | None:
    """What metric ``name`` needs of a scenario, in words; None when it needs nothing."""
    prefix, dot, _ = name.partition(".")
    need = FLOW_NEEDS.get(prefix) if dot else NEEDS.get(name)
    return None if need is None else need.what


def unmet_need(name: str, scenarios: Iterable[Scenario | model.Scenario], whose: str) -> str | None:
    """Why metric ``name`` has no value in any of ``scenarios`` (Scenarios or their
    dictionaries; ``whose``: "the campaign's scenarios", "the store's runs"), or None when some
    scenario can give it."""
    prefix, dot, entry = name.partition(".")
    met: Callable[[Scenario], bool]
    if dot:
        flow_need = FLOW_NEEDS.get(prefix)
        if flow_need is None:
            return None
        what, met = flow_need.what, lambda s: flow_need.met(s, entry)
    else:
        need = NEEDS.get(name)
        if need is None:
            return None
        what, met = need.what, need.met
    if any(met(as_mapping(s, "scenarios", "Scenario")) for s in scenarios):
        return None
    return f"metric '{name}' needs {what}, which none of {whose} has"

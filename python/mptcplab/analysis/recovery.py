"""Responsiveness: how long a subflow's congestion window takes to regain its former size once
competing flows leave its path.

The measure of draft-walid-mptcp-congestion-control-04 §5.2 (spec §2.6): one MPTCP connection
runs alone, TCP flows join one of its paths for a while and leave, and the time from their
leaving until that path's window is back at its mean from before they came shows how quickly the
congestion control takes back capacity that has become free (BALIA's draft reports 14.73 s for
BALIA, 17.75 s for LIA, 58.5 s for OLIA).

Here the competing flows are the scenario's flow entries that stop (``stop_s``) and share a link
with the subflow's path, where that link is one that not all of the connection's paths use
(:func:`leaving_flows`). The reference is the subflow's mean window from the end of the warm-up
until the first of them starts; the recovery time is counted from the last one's ``stop_s`` to
the first sample of the window trace at or above that mean. It needs the ``cwnd`` trace, whose
interval (``trace_interval_ms``) is its resolution. A window still below its mean when the run
ends took longer than the run: its recovery is infinite, not left out, so that the slowest runs
are not the ones a median forgets (see ``mptcplab.analysis.unfinished``).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from mptcplab.analysis.metrics import Report, Scenario, _base_id


def leaving_flows(scenario: Scenario, flow: str) -> list[list[Mapping[str, Any]]]:
    """For each path of flow entry ``flow``, the other flow entries that stop and compete with
    it there.

    A flow that stops competes with the paths on which it crosses a link that not every path of
    ``flow`` uses: in the draft's scenario the TCP flows cross path 2's own link and the server
    link that both paths share, and it is path 2's window they take, not path 1's. Only a flow
    that meets ``flow`` on shared links alone competes with every path it crosses."""
    spec = next((f for f in scenario.get("flows", ()) if f["id"] == flow), None)
    if spec is None:
        return []
    paths = [set(p) for p in spec["paths"]]
    common = set.intersection(*paths) if paths else set()
    competing: list[list[Mapping[str, Any]]] = [[] for _ in paths]
    for other in scenario.get("flows", ()):
        if other["id"] == flow or other.get("stop_s") is None:
            continue
        crossed = set().union(*other["paths"])
        own = crossed - common
        on = own if any(own & p for p in paths) else crossed
        for links, entries in zip(paths, competing, strict=True):
            if links & on:
                entries.append(other)
    return competing


def subflow_recovery_s(
    time_s: Sequence[float],
    cwnd: Sequence[float],
    *,
    reference_from_s: float,
    joined_s: float,
    left_s: float,
) -> float | None:
    """Seconds from ``left_s`` until ``cwnd`` first reaches its mean over
    [``reference_from_s``, ``joined_s``); None without a reference sample, infinite if it never
    does before the trace ends (the run ended first: the recovery takes longer than it)."""
    t = np.asarray(time_s, dtype=float)
    w = np.asarray(cwnd, dtype=float)
    before = w[(t >= reference_from_s) & (t < joined_s)]
    if before.size == 0:
        return None
    back = np.flatnonzero((t >= left_s) & (w >= before.mean()))
    if back.size == 0:
        return math.inf
    # Sample times are nanoseconds of simulated time written as seconds: so is the answer.
    return round(float(t[back[0]] - left_s), 9)


def cwnd_recovery_s(report: Report, scenario: Scenario, flow: str) -> float | None:
    """Mean recovery time of flow entry ``flow``'s subflows that flows leaving (``stop_s``)
    competed with, over its users; None when no subflow had such competitors coming after the
    warm-up (a path whose competitors came earlier has no reference and is left out, as the
    check before a campaign expects) or without a ``cwnd`` trace; infinite when one of them did
    not regain its mean before the run ended."""
    traces = report.get("traces") or {}
    time_s = traces.get("time_s") or []
    series = {s["name"]: s["values"] for s in traces.get("cwnd") or []}
    spec = next((f for f in scenario.get("flows", ()) if f["id"] == flow), None)
    if spec is None or not time_s or not series:
        return None
    warmup = float(scenario.get("warmup_s", 0.0))
    users = [f["id"] for f in report["flows"] if _base_id(f["id"]) == flow]
    times: list[float] = []
    for p, leaving in enumerate(leaving_flows(scenario, flow)):
        if not leaving:
            continue
        joined = min(float(o.get("start_s", 0.0)) for o in leaving)
        left = max(float(o["stop_s"]) for o in leaving)
        for user in users:
            values = series.get(f"{user}/{p}")
            if values is None:
                return None
            recovery = subflow_recovery_s(
                time_s, values, reference_from_s=warmup, joined_s=joined, left_s=left
            )
            if recovery is not None:
                times.append(recovery)
    return sum(times) / len(times) if times else None

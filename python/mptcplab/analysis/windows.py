"""Congestion windows over time across a campaign: every subflow's window trace, the median over
the replications of each variant at each sample.

Responsiveness is judged on the windows themselves (draft-walid-mptcp-congestion-control-04
§5.2 plots path 2's window as TCP flows join and leave it); the run metric
``cwnd_recovery_s.<flow>`` summarises one run, this shows the whole trace. Traces from different
networks cannot be pooled, so this applies to campaigns that run one point per variant (a study
of qualitative factors such as the congestion control) and whose runs trace ``cwnd``. The users
of a flow entry with ``count`` > 1 are pooled with its replications.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from mptcplab.analysis.metrics import MSS_BYTES, _base_id
from mptcplab.analysis.tables import finished_main_runs, traced_runs
from mptcplab.campaign.store import Store


@dataclass(frozen=True)
class WindowTraces:
    """Per subflow name (``<flow entry>/<subflow index>``), per variant: the sample times (s)
    and the median window (segments of ``MSS_BYTES``). ``events``: (time s, what happens) for
    the flow entries that start late or stop writing."""

    series: dict[str, dict[str, tuple[np.ndarray, np.ndarray]]]
    events: list[tuple[float, str]] = field(default_factory=list)


def _events(scenario: Mapping[str, object]) -> list[tuple[float, str]]:
    out = []
    for flow in scenario.get("flows") or []:  # type: ignore[union-attr]
        start = float(flow.get("start_s", 0.0) or 0.0)
        if start > 0.0:
            out.append((start, f"{flow['id']} starts"))
        if flow.get("stop_s") is not None:
            out.append((float(flow["stop_s"]), f"{flow['id']} stops"))
    return out


def _entry_subflow(name: str) -> str:
    """``cross#3/0`` → ``cross/0``: the users of a counted entry are one series."""
    flow, _, subflow = name.rpartition("/")
    return f"{_base_id(flow)}/{subflow}"


def window_traces(store: Store, runs: pd.DataFrame) -> WindowTraces | None:
    """The median window traces of the finished main runs, or None when they traced no windows
    or some variant ran more than one point."""
    done = finished_main_runs(runs)
    if done.empty or (done.groupby("variant")[["design", "point"]].nunique() > 1).any(axis=None):
        return None
    # variant -> subflow name -> [(times, windows)], one entry per run and user.
    collected: dict[str, dict[str, list[tuple[np.ndarray, np.ndarray]]]] = {}
    events: dict[tuple[float, str], None] = {}
    for variant, scenario, report in traced_runs(store, done, "cwnd"):
        traces = report.get("traces") or {}
        times = np.asarray(traces.get("time_s") or [], dtype=float)
        for series in traces.get("cwnd") or []:
            values = np.asarray(series["values"], dtype=float) / MSS_BYTES
            n = min(times.size, values.size)
            collected.setdefault(variant, {}).setdefault(_entry_subflow(series["name"]), []).append(
                (times[:n], values[:n])
            )
        events.update(dict.fromkeys(_events(scenario)))
    if not collected:
        return None
    by_name: dict[str, dict[str, tuple[np.ndarray, np.ndarray]]] = {}
    for variant, names in collected.items():
        for name, traces in names.items():
            n = min(t.size for t, _ in traces)
            stacked = np.vstack([w[:n] for _, w in traces])
            by_name.setdefault(name, {})[variant] = (traces[0][0][:n], np.median(stacked, axis=0))
    return WindowTraces(series=by_name, events=sorted(events))

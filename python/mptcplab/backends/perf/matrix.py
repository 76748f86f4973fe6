"""The NorNet-style gain matrix (Dreibholz, Zhou, Fa; spec §5.3) from perf records.

A relation is (source address, destination): its TCP goodput is the mean over the TCP
transfers bound to that source, its MPTCP goodput the mean over the unbound MPTCP transfers of
the same host to the same destination (they may use every path of the host), and its gain
``ln(MPTCP / TCP)``. IPv4 and IPv6 relations are kept apart. Relations where MPTCP reaches less
than 97.5 % of TCP are the critical ones.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd

from mptcplab.analysis.heatmap import HeatGrid
from mptcplab.analysis.metrics import critical_class, log_gain

COLUMNS = [
    "family",
    "host",
    "source",
    "destination",
    "tcp_mbps",
    "tcp_runs",
    "mptcp_mbps",
    "mptcp_runs",
    "mptcp_fallbacks",
    "failed",
    "ratio",
    "log_gain",
    "critical",
]


def _frame(records: Sequence[dict[str, Any]]) -> pd.DataFrame:
    return pd.DataFrame.from_records(
        [
            {
                "family": f"IPv{r.get('family', 4)}",
                "host": r.get("host", ""),
                "source": r.get("source", "*"),
                "destination": r.get("server", r.get("destination", "")),
                "transport": r["transport"],
                "goodput_mbps": r.get("goodput_mbps", math.nan),
                "failed": "error" in r,
                "fallback": r["transport"] == "mptcp" and r.get("mptcp") is False,
            }
            for r in records
        ]
    )


def gain_matrix(records: Sequence[dict[str, Any]]) -> pd.DataFrame:
    """One row per relation (see the module's docstring), columns :data:`COLUMNS`."""
    if not records:
        return pd.DataFrame(columns=COLUMNS)
    frame = _frame(records)
    ok = frame[~frame["failed"]]
    tcp_all = frame[frame["transport"] == "tcp"]
    mptcp_all = frame[frame["transport"] == "mptcp"]
    mptcp_key = ["family", "host", "destination"]
    mptcp = (
        ok[ok["transport"] == "mptcp"]
        .groupby(mptcp_key)
        .agg(
            mptcp_mbps=("goodput_mbps", "mean"),
            mptcp_runs=("goodput_mbps", "size"),
            mptcp_fallbacks=("fallback", "sum"),
        )
    )
    mptcp_failed = mptcp_all.groupby(mptcp_key)["failed"].sum()
    rows = []
    for key, runs in tcp_all.groupby(["family", "host", "source", "destination"], sort=False):
        family, host, source, destination = key
        done = runs[~runs["failed"]]["goodput_mbps"]
        mkey = (family, host, destination)
        m = mptcp.loc[mkey] if mkey in mptcp.index else None
        tcp_mbps = float(done.mean()) if len(done) else math.nan
        mptcp_mbps = float(m["mptcp_mbps"]) if m is not None else math.nan
        ratio = mptcp_mbps / tcp_mbps if tcp_mbps > 0 else math.nan
        rows.append(
            {
                "family": family,
                "host": host,
                "source": source,
                "destination": destination,
                "tcp_mbps": tcp_mbps,
                "tcp_runs": len(done),
                "mptcp_mbps": mptcp_mbps,
                "mptcp_runs": int(m["mptcp_runs"]) if m is not None else 0,
                "mptcp_fallbacks": int(m["mptcp_fallbacks"]) if m is not None else 0,
                "failed": int(runs["failed"].sum()) + int(mptcp_failed.get(mkey, 0)),
                "ratio": ratio,
                "log_gain": log_gain(mptcp_mbps, tcp_mbps),
                "critical": critical_class(ratio),
            }
        )
    return pd.DataFrame.from_records(rows, columns=COLUMNS)


def heat_grid(matrix: pd.DataFrame) -> HeatGrid:
    """The matrix's log gains as a grid for :func:`mptcplab.analysis.plots.heat_map`: sources
    down, destinations across, one panel per address family."""
    sources = list(dict.fromkeys(matrix["source"]))
    destinations = list(dict.fromkeys(matrix["destination"]))
    values: dict[str, np.ndarray] = {}
    counts: dict[str, np.ndarray] = {}
    for family, rows in matrix.groupby("family", sort=True):
        grid = np.full((len(sources), len(destinations)), np.nan)
        count = np.zeros_like(grid, dtype=int)
        for row in rows.itertuples():
            i, j = sources.index(row.source), destinations.index(row.destination)
            grid[i, j] = row.log_gain
            count[i, j] = min(row.tcp_runs, row.mptcp_runs)
        values[str(family)] = grid
        counts[str(family)] = count
    return HeatGrid(
        metric="log_gain",
        x="destination",
        y="source",
        x_labels=destinations,
        y_labels=sources,
        values=values,
        counts=counts,
        explained=math.nan,
    )

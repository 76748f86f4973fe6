"""Application block latency across a campaign: the latency of every block, pooled per variant.

NSDI 2012 (Raiciu et al., "How Hard Can It Be? Designing and Implementing a Deployable Multipath
TCP", §5, Fig. 7; spec §5.6) compares TCP over WiFi, TCP over 3G and MPTCP with and without its
receive-buffer mechanisms by the distribution of the latency of 8 KB application blocks, not
by a per-run summary. The run metrics ``block_latency_p50_ms`` / ``_p95_ms`` summarise each run;
this module pools the blocks themselves, from the runs' block traces (scenario ``trace =
["blocks"]``). Blocks completed during the warm-up are left out, as the run's own summary
(crates/mpsim/src/sim.rs, ``block_latency``) leaves them out.
"""

from __future__ import annotations

import reprlib
from collections.abc import Mapping, Sequence

import numpy as np
import pandas as pd

from mptcplab.analysis.tables import traced_runs
from mptcplab.campaign.store import Store

LATENCY_PERCENTILES = (50, 90, 99)


def block_latencies(store: Store, runs: pd.DataFrame) -> dict[str, np.ndarray]:
    """Every measured block latency (ms) of the finished main runs, per variant label, in the
    order the variants first appear; variants whose runs traced no blocks are left out."""
    pooled: dict[str, list[np.ndarray]] = {}
    for variant, scenario, report in traced_runs(store, runs, "blocks"):
        warmup = float(scenario.get("warmup_s", 0.0) or 0.0)
        for series in (report.get("traces") or {}).get("blocks") or []:
            done_s = np.asarray(series["done_s"], dtype=float)
            latency = np.asarray(series["latency_ms"], dtype=float)
            pooled.setdefault(variant, []).append(latency[done_s >= warmup])
    return {v: np.concatenate(parts) for v, parts in pooled.items()}


def latency_summary(values: np.ndarray | Sequence[float]) -> dict[str, float | int]:
    """Blocks, mean, :data:`LATENCY_PERCENTILES` (``p50`` …, interpolated linearly between
    neighbouring values, numpy's default) and maximum of some block latencies (ms, an array or
    a list); only ``blocks`` when there are none."""
    values = latency_values(values, "values")
    summary: dict[str, float | int] = {"blocks": int(values.size)}
    if values.size:
        summary["mean"] = float(values.mean())
        for p, v in zip(
            LATENCY_PERCENTILES, np.percentile(values, LATENCY_PERCENTILES), strict=True
        ):
            summary[f"p{p}"] = float(v)
        summary["max"] = float(values.max())
    return summary


def latency_values(values: np.ndarray | Sequence[float], argument: str) -> np.ndarray:
    """Block latencies (ms) as a flat array of numbers."""
    try:
        array = np.asarray(values, dtype=float)
    except (TypeError, ValueError):
        array = None
    if array is None or array.ndim != 1:
        raise ValueError(
            f"{argument}: expected a list or 1-D array of latencies (ms), "
            f"got {reprlib.repr(values)}"
        )
    return array


def latency_table(latencies: Mapping[str, np.ndarray | Sequence[float]]) -> pd.DataFrame:
    """Blocks, mean, percentiles and maximum of the pooled latencies of each variant (ms), given
    as arrays or lists."""
    rows = []
    for variant, values in latencies.items():
        summary = latency_summary(latency_values(values, f"latencies[{variant!r}]"))
        row: dict[str, object] = {"variant": variant, "blocks": summary.pop("blocks")}
        row |= {f"{name} ms": value for name, value in summary.items()}
        rows.append(row)
    return pd.DataFrame.from_records(rows)

"""Sensitivity of a campaign's conclusions to the design (CoNEXT 2013 §4, spec §4.6).

With ``designs = k > 1`` in the campaign, each variant's metric is observed on k independent
designs; the 5th, 25th, 50th, 75th and 95th percentiles of the per-point medians are compared
across designs and their standard deviation is given relative to the metric's range
(:func:`mptcplab.design.sensitivity`). Small values mean the design did not drive the result.
"""

from __future__ import annotations

import pandas as pd

from mptcplab.analysis.tables import PERCENTILES
from mptcplab.design import sensitivity


def sensitivity_table(medians: pd.DataFrame, metric: str) -> pd.DataFrame | None:
    """One row per variant: relative standard deviation (std / range) of each percentile across
    the designs, plus the largest of them; None with fewer than two designs holding values."""
    rows = []
    for variant, group in medians.groupby("variant", sort=False):
        per_design = [g[metric].dropna().to_numpy() for _, g in group.groupby("design", sort=True)]
        per_design = [values for values in per_design if values.size]
        if len(per_design) < 2:
            continue
        table = sensitivity(per_design, PERCENTILES)
        row = {"variant": variant, "designs": len(per_design)}
        for p, value in table["relative_std"].items():
            row[f"p{p:g}"] = float(value)
        row["max"] = float(table["relative_std"].max())
        row["range"] = float(table["range"].iloc[0])
        rows.append(row)
    return pd.DataFrame.from_records(rows) if rows else None

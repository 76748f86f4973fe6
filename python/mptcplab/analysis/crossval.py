"""Cross-validation of backends: the same design points run on the simulator and the emulator
(a campaign with ``backends = ["sim", "emu"]``), compared point by point.

The first listed backend is the reference: each other backend's per-point median of a metric is
divided by the reference's. A ratio outside ``1 ± DISAGREEMENT`` marks a point where the two
disagree. An emulator run whose fidelity check found the emulator itself to be the bottleneck
(``fidelity.emulation_bottleneck``: linkem could not keep up) does not measure the kernel, so
such points are flagged and left out of the summary figures.
"""

from __future__ import annotations

import io
from typing import Any

import pandas as pd
from matplotlib.figure import Figure

from mptcplab.analysis.tables import point_medians
from mptcplab.campaign.spec import BACKEND_LEVEL
from mptcplab.campaign.store import Store

#: Relative difference beyond which a point counts as a disagreement between two backends.
DISAGREEMENT = 0.25
FLAGGED = "emulation bottleneck"


def backend_table(
    runs: pd.DataFrame, store: Store, metric: str = "goodput_mbps"
) -> pd.DataFrame | None:
    """One row per design point (and variant of the other qualitative factors): the metric's
    median on each backend, each other backend's ratio to the first, and whether an emulator
    run of the point was flagged. None when the runs do not cross backends."""
    levels = list(runs.attrs.get("levels", []))
    if BACKEND_LEVEL not in levels or runs.empty or metric not in runs:
        return None
    backends = list(dict.fromkeys(runs[BACKEND_LEVEL].dropna()))
    if len(backends) < 2:
        return None
    others = [lv for lv in levels if lv != BACKEND_LEVEL]
    factors = list(runs.attrs.get("factors", []))
    medians = point_medians(runs, [metric])
    if medians.empty:
        return None
    keys = ["design", "point", *others, *factors]
    # unstack, not pivot_table: the latter crosses every key level (a point's factor values
    # with every other point's) into rows that never ran.
    wide = medians.set_index([*keys, BACKEND_LEVEL])[metric].unstack(BACKEND_LEVEL)
    wide = wide.reindex(columns=backends)
    wide.columns = [f"{metric} {b}" for b in backends]
    base = f"{metric} {backends[0]}"
    for b in backends[1:]:
        wide[f"{b}/{backends[0]}"] = wide[f"{metric} {b}"] / wide[base]
    done = runs[(runs["role"] == "main") & (runs["status"] == "done")]
    flagged = store.emulation_bottlenecked(done["run_key"])
    marks = done.assign(_flag=done["run_key"].isin(flagged)).groupby(keys, dropna=False)["_flag"]
    wide[FLAGGED] = marks.any().reindex(wide.index).fillna(False).astype(bool)
    out = wide.reset_index()
    out.attrs.update({"backends": backends, "metric": metric, "factors": factors})
    return out


def summary(table: pd.DataFrame) -> pd.DataFrame:
    """Per compared backend: points compared, median / min / max ratio to the reference, and how
    many points disagree by more than ``DISAGREEMENT`` (flagged points left out)."""
    backends = table.attrs["backends"]
    clean = table[~table[FLAGGED]]
    rows: list[dict[str, Any]] = []
    for b in backends[1:]:
        ratio = clean[f"{b}/{backends[0]}"].dropna()
        rows.append(
            {
                "ratio": f"{b}/{backends[0]}",
                "points": int(ratio.size),
                "flagged (left out)": int(table[FLAGGED].sum()),
                "median": float(ratio.median()) if ratio.size else float("nan"),
                "min": float(ratio.min()) if ratio.size else float("nan"),
                "max": float(ratio.max()) if ratio.size else float("nan"),
                f"off by > {DISAGREEMENT:.0%}": int((abs(ratio - 1.0) > DISAGREEMENT).sum()),
            }
        )
    return pd.DataFrame.from_records(rows)


def disagreements(table: pd.DataFrame) -> pd.DataFrame:
    """The points (with their factor values) where a backend is off by more than
    ``DISAGREEMENT`` from the reference, flagged ones included and marked."""
    backends = table.attrs["backends"]
    off = pd.Series(False, index=table.index)
    for b in backends[1:]:
        off |= (table[f"{b}/{backends[0]}"] - 1.0).abs() > DISAGREEMENT
    return table[off]


def scatter(table: pd.DataFrame) -> bytes:
    """Each other backend's metric against the reference's, one marker per point, with the
    diagonal and the ±DISAGREEMENT band; flagged points hollow."""
    backends = table.attrs["backends"]
    metric = table.attrs["metric"]
    base = table[f"{metric} {backends[0]}"]
    fig = Figure(figsize=(5.6, 5.0))
    ax = fig.add_subplot()
    top = 0.0
    for i, b in enumerate(backends[1:]):
        other = table[f"{metric} {b}"]
        flagged = table[FLAGGED]
        colour = f"C{i}"
        ax.scatter(base[~flagged], other[~flagged], s=22, color=colour, label=b)
        if flagged.any():
            ax.scatter(
                base[flagged],
                other[flagged],
                s=22,
                facecolors="none",
                edgecolors=colour,
                label=f"{b} ({FLAGGED})",
            )
        top = max(top, float(pd.concat([base, other]).max()))
    top = top * 1.05 if top > 0 else 1.0
    line = [0.0, top]
    ax.plot(line, line, color="#444444", linewidth=0.8)
    ax.fill_between(
        line,
        [0.0, top * (1 - DISAGREEMENT)],
        [0.0, top * (1 + DISAGREEMENT)],
        color="#999999",
        alpha=0.15,
        label=f"±{DISAGREEMENT:.0%}",
    )
    ax.set_xlim(0, top)
    ax.set_ylim(0, top)
    ax.set_xlabel(f"{metric} on {backends[0]}")
    ax.set_ylabel(f"{metric} on the other backend")
    ax.grid(True, color="#dddddd", linewidth=0.6)
    ax.legend(frameon=False, fontsize=9)
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png", dpi=110, bbox_inches="tight")
    return buffer.getvalue()

"""A campaign store as pandas tables: one row per run, per-point medians, percentile tables.

CoNEXT 2013 (spec §4.6) repeats every design point and keeps the median over the repetitions;
:func:`point_medians` does the same for every metric. Metrics that compare an MPTCP run with the
single-path TCP runs of the same point and replication (``aggregation_benefit_measured``,
``log_gain``) are computed here, run by run, before the medians are taken.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any, TextIO

import pandas as pd

from mptcplab.analysis._checks import (
    finite_numbers,
    is_number,
    known_metric,
    listed,
    require_columns,
)
from mptcplab.analysis.metrics import is_metric_name, metric_info, reference_metrics
from mptcplab.analysis.unfinished import quantiles
from mptcplab.campaign.store import RUN_COLUMNS, Store
from mptcplab.errors import UserError
from mptcplab.outputs import writing

PERCENTILES = (5, 25, 50, 75, 95)


def _open(store: Store | str | Path) -> tuple[Store, bool]:
    if isinstance(store, Store):
        return store, False
    return Store(store), True


def _variant_label(levels: dict[str, Any]) -> str:
    return ", ".join(f"{k}={v}" for k, v in levels.items()) or "all"


def to_pandas(store: Store | str | Path, *, references: bool = False) -> pd.DataFrame:
    """Every planned run of the store's campaign: one row each, with its factor values, levels,
    status and metrics (NaN when not applicable or not finished).

    ``variant`` is a label of the run's qualitative levels ("cc=lia, buffer=auto"); each
    qualitative factor also has its own column. Reference runs (single-path TCP) are left out
    unless ``references`` is true; their goodputs already enter the main runs' metrics. A
    reference run that several variants share (a TCP path is the same whatever MPTCP's
    congestion control) is one row, with the levels its variants have in common; the others
    are empty.
    """
    db, owned = _open(store)
    try:
        rows = db.task_rows()
        designs = db.designs()
        reference_flow = _reference_flow_ids(db, rows)
    finally:
        if owned:
            db.close()
    reference_metrics_of = {
        r["run_key"]: r["metrics"]
        for r in rows
        if r["role"] == "reference" and r["status"] == "done" and r["metrics"]
    }
    shared_levels: dict[str, dict[str, Any]] = {}
    for r in rows:
        if r["role"] == "reference":
            common = shared_levels.setdefault(r["run_key"], dict(r["variant"]))
            for name, level in r["variant"].items():
                if common.get(name) != level:
                    common[name] = None
    records: list[dict[str, Any]] = []
    seen_keys: set[tuple[str, str]] = set()
    for r in rows:
        if r["role"] == "reference" and not references:
            continue
        levels = shared_levels[r["run_key"]] if r["role"] == "reference" else r["variant"]
        label = _variant_label({k: v for k, v in levels.items() if v is not None})
        if (r["run_key"], label) in seen_keys:
            continue
        seen_keys.add((r["run_key"], label))
        record: dict[str, Any] = {c: r.get(c) for c in RUN_COLUMNS if c != "variant"}
        record["variant"] = label
        record.update(levels)
        record.update(r["factors"])
        metrics = dict(r["metrics"] or {})
        path_goodputs = _reference_goodputs(
            r["reference_keys"], reference_flow.get(r["run_key"]), reference_metrics_of
        )
        if r["status"] == "done" and path_goodputs is not None:
            metrics.update(_reference_based(metrics, path_goodputs))
        record.update(metrics)
        records.append(record)
    frame = pd.DataFrame.from_records(records)
    frame.attrs["factors"] = list(designs[0]["factor_names"]) if designs else []
    frame.attrs["levels"] = list(rows[0]["variant"]) if rows else []
    return frame


def finished_main_runs(runs: pd.DataFrame) -> pd.DataFrame:
    """The rows of the main runs (not the TCP references) that finished."""
    if runs.empty:
        return runs
    return runs[(runs["role"] == "main") & (runs["status"] == "done")]


def traced_runs(
    store: Store, runs: pd.DataFrame, kind: str
) -> Iterator[tuple[str, Mapping[str, Any], Mapping[str, Any]]]:
    """(variant, scenario, report) of every finished main run whose scenario records the trace
    ``kind`` (``"blocks"``, ``"cwnd"``, ...), in the order of ``runs``."""
    done = finished_main_runs(runs)
    for key, variant in dict.fromkeys(zip(done["run_key"], done["variant"], strict=True)):
        scenario = store.scenario(key) or {}
        trace = scenario.get("trace") or []
        if isinstance(trace, list) and kind in trace:
            yield variant, scenario, store.report(key) or {}


def _reference_flow_ids(db: Store, rows: list[dict[str, Any]]) -> dict[str, str]:
    """The id of the MPTCP flow of each finished main run that has reference runs: the flow
    its reference runs replace by single-path TCP, keeping its id and the other flows."""
    out: dict[str, str] = {}
    for r in rows:
        if r["role"] != "main" or r["status"] != "done" or not r["reference_keys"]:
            continue
        if r["run_key"] in out:
            continue
        scenario = db.scenario(r["run_key"]) or {}
        mptcp = [f["id"] for f in scenario.get("flows", ()) if f.get("protocol") == "mptcp"]
        if len(mptcp) == 1:
            out[r["run_key"]] = mptcp[0]
    return out


def _reference_goodputs(
    keys: list[str] | None, flow: str | None, metrics_of: Mapping[str, Mapping[str, float]]
) -> list[float] | None:
    """What single-path TCP got on each path in the MPTCP flow's place: that flow's goodput in
    each reference run — not the run's total, which counts the flows sharing the paths with
    it. None unless every reference run finished and reported it."""
    if not keys or flow is None:
        return None
    name = f"group_goodput_mbps.{flow}"
    goodputs = [metrics_of.get(k, {}).get(name) for k in keys]
    if any(g is None for g in goodputs):
        return None
    return [float(g) for g in goodputs if g is not None]


def _reference_based(metrics: dict[str, float], path_goodputs: list[float]) -> dict[str, float]:
    mptcp = metrics.get("mptcp_goodput_mbps")
    return {} if mptcp is None else reference_metrics(mptcp, path_goodputs)


def point_medians(runs: pd.DataFrame, metrics: Sequence[str]) -> pd.DataFrame:
    """Median of each metric over the finished replications of every (design, point, variant),
    with the point's factor values, its levels and ``replications`` (how many were finished).
    A run whose metric timed something that had not happened when it ended (+inf, see
    :mod:`mptcplab.analysis.unfinished`) counts as slower than every other, and a log gain of
    a run where MPTCP delivered nothing (−inf) as worse than every other: the median is
    infinite when it falls on such a run.

    ``metrics`` is a list of names, each a column of ``runs`` or a metric of
    :func:`mptcplab.analysis.metrics.all_metric_names` (all NaN when no run gives it)."""
    metrics = listed(metrics, "metrics", "metric names")
    for m in metrics:
        known_metric(m, runs.columns, "metrics")
    factors = list(runs.attrs.get("factors", []))
    levels = list(runs.attrs.get("levels", []))
    keys = ["design", "point", "variant", *levels, *factors]
    empty = pd.DataFrame(columns=[*keys, *metrics, "replications"])
    # The campaign's levels and factors, which the comparisons read, whatever has finished.
    empty.attrs.update(runs.attrs)
    if runs.empty:
        return empty
    done = runs[(runs["role"] == "main") & (runs["status"] == "done")]
    if done.empty:
        return empty
    # Rows keep the plan's order: designs, points, then variants in the campaign's level order.
    grouped = done.groupby(keys, sort=False, dropna=False)
    present = [m for m in metrics if m in done.columns]
    medians = grouped[present].median() if present else grouped.size().to_frame()[[]]
    medians["replications"] = grouped.size()
    out = medians.reset_index()
    for m in metrics:
        if m not in out.columns:
            out[m] = float("nan")
    out.attrs.update(runs.attrs)
    return out


def alike_replications(runs: pd.DataFrame, metrics: Sequence[str]) -> tuple[int, int]:
    """How many (design, point, variant) with two finished replications or more gave the same
    value of every metric in each of them, and how many there are. The simulator is
    deterministic: where nothing random in a scenario matters (no random loss, RED, jitter or
    simultaneous starts), every seed gives the same run, and the replications add nothing."""
    done = finished_main_runs(runs)
    present = [m for m in metrics if m in done.columns]
    if done.empty or not present:
        return 0, 0
    grouped = done.groupby(["design", "point", "variant"], sort=False, dropna=False)
    repeated = grouped.size() >= 2
    same = grouped[present].nunique(dropna=False).le(1).all(axis=1)
    return int((same & repeated).sum()), int(repeated.sum())


def percentile_table(
    medians: pd.DataFrame,
    metric: str,
    *,
    by: str = "variant",
    percentiles: Sequence[float] = PERCENTILES,
    levels: Sequence[Any] | None = None,
) -> pd.DataFrame:
    """Percentiles of a metric's per-point medians for each value of ``by`` (a variant, or one
    qualitative factor's level), with the mean and the number of points. ``levels``, when
    given, are the values of ``by`` that get a row, in this order: one without medians (a
    variant whose runs all failed) gets a row of 0 points instead of none.

    ``percentiles`` are in [0, 100]. NaN medians are left out (no value). Infinite ones are
    refused, except +inf of a metric that times something (``MetricInfo.unfinished``): a point
    where that ran past the run, which counts as larger than any other and makes the
    percentiles above it and the mean infinite; and −inf of one that says what it means
    (``MetricInfo.stalled``), at the other end. Without medians the table has its columns and
    no row."""
    require_columns(medians.columns, [metric], "metric", "medians")
    require_columns(medians.columns, [by], "by", "medians")
    info = metric_info(metric) if is_metric_name(metric) else None
    finite_numbers(
        medians[metric],
        "metric",
        unfinished=bool(info and info.unfinished),
        stalled=bool(info and info.stalled),
    )
    percentiles = listed(percentiles, "percentiles", "numbers in [0, 100]")
    if not all(is_number(p) and 0 <= p <= 100 for p in percentiles):
        raise ValueError(f"percentiles: expected numbers in [0, 100], got {percentiles}")
    columns = [by, "points", *(f"p{p:g}" for p in percentiles), "mean"]
    groups = dict(list(medians.groupby(by, sort=False)))
    rows = []
    for level in list(groups) if levels is None else listed(levels, "levels", "values of by"):
        group = groups.get(level, medians.iloc[0:0])
        values = group[metric].dropna()
        row: dict[str, Any] = {by: level, "points": int(values.size)}
        if values.size:
            found = quantiles(values.to_numpy(dtype=float), [p / 100 for p in percentiles])
            for p, value in zip(percentiles, found, strict=True):
                row[f"p{p:g}"] = float(value)
            row["mean"] = float(values.mean())
        rows.append(row)
    return pd.DataFrame.from_records(rows, columns=columns)


def export(store: str | Path, out: str | Path | TextIO, *, fmt: str) -> int:
    """Write one row per run (factor values, levels, status, metrics) as CSV or Parquet, to a
    file or (CSV only) to an open text stream such as ``sys.stdout``."""
    frame = to_pandas(store, references=True)
    if fmt not in ("csv", "parquet"):
        raise UserError(f"unknown export format '{fmt}'; expected csv or parquet", field="format")
    if not isinstance(out, str | Path):
        if fmt != "csv":
            raise UserError("Parquet is binary: give it a file, not a text stream", field=fmt)
        frame.to_csv(out, index=False)
        return len(frame)
    out = Path(out)
    with writing(out, "the export"):
        if fmt == "csv":
            frame.to_csv(out, index=False)
        else:
            frame.to_parquet(out, index=False)
    return len(frame)

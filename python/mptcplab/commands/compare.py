"""``mptcplab compare STORE_OR_CAMPAIGN``: is one level of a qualitative factor better than
another? Each pair of levels compared point by point, as in the report, in the terminal."""

from __future__ import annotations

import json
import math
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from mptcplab.commands.console import command_console, print_table, report_table
from mptcplab.commands.path_value import path_value
from mptcplab.commands.store_target import StoreOrCampaign, resolve_store
from mptcplab.errors import UserError
from mptcplab.outputs import check_writable, writing

if TYPE_CHECKING:
    import pandas as pd


def _number(value: float) -> str:
    from mptcplab.analysis.unfinished import nonfinite_text

    if (text := nonfinite_text(value)) is not None:
        return text
    return f"{value:.3g}" if abs(value) >= 1e-3 or value == 0 else f"{value:.2e}"


def _p(value: float) -> str:
    if not math.isfinite(value):
        return "–"
    return "< 0.001" if value < 1e-3 else f"{value:.3f}"


def compare_command(
    target: StoreOrCampaign,
    metric: Annotated[
        list[str] | None,
        typer.Option(
            "--metric",
            "-m",
            help="A metric to compare (repeatable; default: the campaign's metrics).",
        ),
    ] = None,
    csv: Annotated[
        Path | None,
        typer.Option(
            "--csv",
            help="Write the comparisons, one row per pair of levels and metric, as CSV here "
            "(- for standard output) instead of the tables.",
            parser=path_value,
        ),
    ] = None,
) -> None:
    """Compare the levels of each qualitative factor point by point.

    For each metric and each pair of levels of a factor (the other factors' levels held fixed):
    the median of the per-point differences b − a with its distribution-free 95 % interval, the
    share of points where b is higher, and the sign test's p-value, adjusted by
    Benjamini–Hochberg over the metric's comparisons. Two variants that share a single point
    (a reproduction's settings) are compared over their replications there instead: the
    rank-sum test and the Hodges–Lehmann shift (`over` counts runs, not points); when every
    replication of both, two or more each, gave one value ("all alike"), the difference is
    exact and untested.
    """
    from rich.markup import escape

    from mptcplab.analysis.metrics import all_metric_names, is_metric_name
    from mptcplab.analysis.report import NOTHING_COMPARED, variant_comparisons

    for name in metric or []:
        if not is_metric_name(name):
            raise UserError(
                f"unknown metric '{name}'; `mptcplab metrics` lists them "
                f"({', '.join(all_metric_names()[:6])}, ...)",
                field="--metric",
            )
    store = resolve_store(target)
    if csv is not None:
        check_writable(csv, "the comparisons", reads=(store, target))
    if metric:
        _refuse_what_the_store_cannot_hold(store, metric)
    comparisons = variant_comparisons(store, metric)
    if csv is not None:
        _write_csv(comparisons, csv)
        return
    console = command_console()
    for name, compared in comparisons.items():
        if compared.empty:
            why = (
                NOTHING_COMPARED
                if compared.attrs.get("levels")
                else "the campaign has no qualitative factor to compare"
            )
            console.print(f"{name}: {why}", markup=False, highlight=False)
            continue
        table = report_table(f"{name}: b against a")
        table.add_column("b vs a")
        table.add_column("over", no_wrap=True)
        table.add_column("median a → b", no_wrap=True)
        table.add_column("b − a [95 % interval]")
        table.add_column("b higher", justify="right", no_wrap=True)
        table.add_column("p adj.", justify="right", no_wrap=True)
        table.add_column("verdict")
        for row in compared.to_dict("records"):
            # The factor and its levels, then the other factors' levels held (none with one
            # qualitative factor).
            pair = f"{row['factor']}: {row['b']} vs {row['a']}"
            if row["with"]:
                pair += f"\n  with {row['with']}"
            # Level and factor names are the campaign's text, not markup.
            pair = escape(pair)
            over = row["basis"] if row["basis"] != "points" else f"{row['points']} points"
            share = row["b_higher_share"]
            table.add_row(
                pair,
                over,
                f"{_number(row['median_a'])} → {_number(row['median_b'])}",
                f"{_number(row['median_difference'])} "
                f"[{_number(row['ci_low'])}, {_number(row['ci_high'])}]",
                f"{share:.0%}" if math.isfinite(share) else "–",
                _p(row["p_adjusted"]),
                escape(row["verdict"]),
            )
        print_table(console, table)


def _refuse_what_the_store_cannot_hold(store_path: Path, names: Sequence[str]) -> None:
    """The checks loading a campaign makes of its own metrics (spec.py's check_metric, plan.py's
    flow-entry and needs checks), made of --metric against the store: a known name the store's
    runs cannot have would otherwise compare nothing and print a table of "no common points"."""
    from mptcplab.analysis.metric_needs import need_of
    from mptcplab.analysis.metrics import (
        FLOW_PLACEHOLDER,
        REFERENCE_METRICS,
        flow_metric,
        unknown_flow_entry,
    )
    from mptcplab.campaign.store import Store

    with Store(store_path) as store:
        rows = store.task_rows()
        has_references = any(r["role"] == "reference" for r in rows)
        done = [r for r in rows if r["role"] == "main" and r["status"] == "done"]
        # Every value a finished run has is stored with it (executors/base.py, run_metrics).
        valued = {name for r in done for name in (r["metrics"] or {})}
        flows: set[str] = set()
        if any(flow_metric(name) is not None for name in names):
            # Qualitative levels may change the flows, quantitative factors cannot: one finished
            # run of each variant has every flow entry the store holds.
            seen: set[str] = set()
            for r in done:
                label = json.dumps(r["variant"], sort_keys=True)
                if label in seen:
                    continue
                seen.add(label)
                scenario = store.scenario(r["run_key"]) or {}
                flows.update(str(f.get("id")) for f in scenario.get("flows", ()))
    listed = ", ".join(sorted(flows))
    for name in names:
        found = flow_metric(name)
        if found is not None and found[1] == FLOW_PLACEHOLDER:
            example = sorted(flows)[0] if flows else "type2"
            raise UserError(
                f"write a flow entry's id in place of {FLOW_PLACEHOLDER}, e.g. "
                f"'{found[0].prefix}.{example}' for the users of flow entry '{example}'"
                + (f"; the store's flow entries: {listed}" if flows else ""),
                field="--metric",
            )
        # No finished run, no flow entries known: nothing to compare either way.
        problem = unknown_flow_entry(name, flows) if flows else None
        if problem is not None:
            raise UserError(problem, field="--metric")
        if name in REFERENCE_METRICS and not has_references:
            raise UserError(
                f"metric '{name}' compares with single-path TCP runs, which the store does not "
                "hold: its campaign has no reference_runs = true",
                field="--metric",
            )
        if name not in REFERENCE_METRICS and done and name not in valued:
            need = need_of(name)
            raise UserError(
                f"metric '{name}' has no value in any finished run of the store"
                + (f": it needs {need}" if need else ""),
                field="--metric",
            )


def _write_csv(comparisons: dict[str, pd.DataFrame], out: Path) -> None:
    import pandas as pd

    frames = [table.assign(metric=name) for name, table in comparisons.items() if not table.empty]
    rows = pd.concat(frames, ignore_index=True) if frames else pd.DataFrame(columns=["metric"])
    rows = rows[["metric", *[c for c in rows.columns if c != "metric"]]]
    if str(out) == "-":
        rows.to_csv(sys.stdout, index=False)
        where = "standard output"
    else:
        with writing(out, "the comparisons"):
            rows.to_csv(out, index=False)
        where = str(out)
    noun = "comparison" if len(rows) == 1 else "comparisons"
    command_console(stderr=True).print(f"wrote {len(rows)} {noun} to {where}")


def register(app: typer.Typer) -> None:
    app.command("compare")(compare_command)

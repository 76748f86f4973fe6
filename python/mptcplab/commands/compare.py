"""``mptcplab compare STORE_OR_CAMPAIGN``: is one level of a qualitative factor better than
another? Each pair of levels compared point by point, as in the report, in the terminal."""

from __future__ import annotations

import math
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from mptcplab.commands.console import command_console, report_table
from mptcplab.commands.path_value import path_value
from mptcplab.commands.store_target import StoreOrCampaign, resolve_store
from mptcplab.errors import UserError
from mptcplab.outputs import writing

if TYPE_CHECKING:
    import pandas as pd


def _number(value: float) -> str:
    if not math.isfinite(value):
        return "–"
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
    rank-sum test and the Hodges–Lehmann shift (`over` counts runs, not points).
    """
    from mptcplab.analysis.metrics import all_metric_names, is_metric_name
    from mptcplab.analysis.report import variant_comparisons

    for name in metric or []:
        if not is_metric_name(name):
            raise UserError(
                f"unknown metric '{name}'; `mptcplab metrics` lists them "
                f"({', '.join(all_metric_names()[:6])}, ...)",
                field="--metric",
            )
    store = resolve_store(target)
    comparisons = variant_comparisons(store, metric)
    if csv is not None:
        _write_csv(comparisons, csv)
        return
    console = command_console()
    for name, compared in comparisons.items():
        if compared.empty:
            console.print(f"{name}: the campaign has no qualitative factor to compare")
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
                row["verdict"],
            )
        console.print(table)


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

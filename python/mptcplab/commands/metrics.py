"""``mptcplab metrics``: the metrics a campaign's ``metrics = [...]`` may name, with their
meaning, unit, range and which end is the worse one (the report ranks its critical points by
the first metric that has one)."""

from __future__ import annotations

import json
from typing import Annotated

import typer

from mptcplab.commands.console import command_console, report_table


def _better(higher_is_better: bool | None) -> str:
    if higher_is_better is None:
        return "neither"
    return "higher" if higher_is_better else "lower"


def metrics_command(
    as_json: Annotated[
        bool, typer.Option("--json", help="Print the list as JSON instead of a table.")
    ] = False,
) -> None:
    """List the metrics a campaign can name in `metrics = [...]`.

    Reference metrics compare each MPTCP run with single-path TCP runs over each of its paths: a
    campaign naming one needs `reference_runs = true`. A metric that needs something of the
    scenario (an MPTCP flow, a blocks application, ...) says so; a campaign none of whose runs
    has it is refused. Metrics written with <flow> are given for each flow entry of the
    scenario: name one with the entry's id, e.g. user_goodput_mbps.type2.
    """
    from mptcplab.analysis.metric_needs import need_of
    from mptcplab.analysis.metrics import (
        FLOW_PLACEHOLDER,
        REFERENCE_METRICS,
        all_metric_names,
        metric_info,
    )

    rows = []
    for name in all_metric_names():
        info = metric_info(name)
        rows.append(
            {
                "name": name,
                "description": info.description,
                "unit": info.unit,
                "bounds": list(info.bounds) if info.bounds is not None else None,
                "better": _better(info.higher_is_better),
                "needs_reference_runs": name in REFERENCE_METRICS,
                "needs": need_of(name),
                "flow_entry": FLOW_PLACEHOLDER in name,
            }
        )
    if as_json:
        typer.echo(json.dumps(rows, indent=2))
        return
    table = report_table("metrics")
    for column in ("name", "unit", "range", "better", "reference runs", "meaning"):
        table.add_column(column, no_wrap=column != "meaning")
    for row in rows:
        bounds = row["bounds"]
        table.add_row(
            row["name"],
            row["unit"] or "–",
            f"[{bounds[0]:g}, {bounds[1]:g}]" if bounds else "–",
            row["better"],
            "needed" if row["needs_reference_runs"] else "",
            row["description"] + (f"; needs {row['needs']}" if row["needs"] else ""),
        )
    command_console().print(table)
    command_console().print(
        "range: the theoretical one; a measured value can leave it and is not clipped (a "
        "goodput counts data read after the warm-up that reached the receiver before it)",
        highlight=False,
    )


def register(app: typer.Typer) -> None:
    app.command("metrics")(metrics_command)

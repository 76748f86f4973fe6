"""``mptcplab report STORE_OR_CAMPAIGN -o FILE``: the campaign's self-contained HTML report."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from mptcplab.commands.console import command_console, report_table
from mptcplab.commands.store_target import StoreOrCampaign, resolve_store


def report_command(
    target: StoreOrCampaign,
    output: Annotated[
        Path | None,
        typer.Option(
            "--output", "-o", help="HTML file to write (default: report.html beside the store)."
        ),
    ] = None,
) -> None:
    """Write a campaign's self-contained HTML report.

    The campaign file, the published figures it carries beside ours (also printed here),
    design quality, each metric's distribution per variant and against each
    factor, the worst points, the sensitivity table (several designs) and provenance.
    """
    from mptcplab.analysis.published import display_table
    from mptcplab.analysis.report import published_comparison, write_report

    store = resolve_store(target)
    out = write_report(store, output if output is not None else store.parent / "report.html")
    compared = published_comparison(store)
    if compared is not None:
        shown = display_table(compared, brief=True)
        table = report_table("published results beside ours")
        for column in shown.columns:
            table.add_column(column, no_wrap=column != "figure")
        for row in shown.itertuples(index=False):
            table.add_row(*row)
        command_console().print(table)
    command_console(stderr=True).print(f"wrote {out}")


def register(app: typer.Typer) -> None:
    app.command("report")(report_command)

"""``mptcplab report STORE_OR_CAMPAIGN -o FILE``: the campaign's self-contained HTML report."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from mptcplab.commands.console import command_console, run_progress
from mptcplab.commands.path_value import path_value
from mptcplab.commands.published_table import print_published
from mptcplab.commands.store_target import StoreOrCampaign, resolve_store
from mptcplab.outputs import check_writable


def report_command(
    target: StoreOrCampaign,
    output: Annotated[
        Path | None,
        typer.Option(
            "--output",
            "-o",
            help="HTML file to write (default: report.html beside the store).",
            parser=path_value,
        ),
    ] = None,
) -> None:
    """Write a campaign's self-contained HTML report.

    The campaign file, the published figures it carries beside ours (also printed here),
    design quality, each metric's distribution per variant and against each
    factor, the worst points, the sensitivity table (several designs) and provenance.
    """
    from mptcplab.analysis.report import write_report

    store = resolve_store(target)
    out = output if output is not None else store.parent / "report.html"
    # Before the report of a large store is built.
    check_writable(out, "the report", reads=(store, target))
    with run_progress(command_console(stderr=True)) as bar:
        task = bar.add_task("reading the store", total=None, clock="")

        def progress(section: str, done: int, total: int) -> None:
            bar.update(task, description=section, completed=done, total=total, clock="")

        out = write_report(store, out, progress=progress)
    print_published(store)
    command_console(stderr=True).print(f"wrote {out}")


def register(app: typer.Typer) -> None:
    app.command("report")(report_command)

"""The published figures of a stored campaign beside its runs, as a terminal table: printed by
``mptcplab report`` and at the end of ``mptcplab run``."""

from __future__ import annotations

from pathlib import Path

from rich.markup import escape

from mptcplab.commands.console import command_console, report_table


def print_published(store: Path) -> None:
    """Print the table when the stored campaign carries ``[[published]]`` figures."""
    from mptcplab.analysis.published import display_table
    from mptcplab.analysis.report import published_comparison

    compared = published_comparison(store)
    if compared is None:
        return
    shown = display_table(compared, brief=True)
    table = report_table("published results beside ours")
    for column in shown.columns:
        table.add_column(column, no_wrap=column != "figure")
    for row in shown.itertuples(index=False):
        # Labels and sources are the campaign's text, not markup ("[/]" would stop the table).
        table.add_row(*(escape(str(cell)) for cell in row))
    command_console().print(table)

"""The console the commands print to. On a terminal rich fits its width; into a file, a pipe or
a CI log it would squeeze tables and progress lines into 80 columns and cut their figures
("2000/2…"), so there it gets at least 120, and a line longer than that (a summary naming a
long path) stays one line instead of being broken at a space."""

from __future__ import annotations

from rich import box
from rich.console import Console
from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn, TimeRemainingColumn
from rich.table import Table

MIN_WIDTH_OFF_TERMINAL = 120


def command_console(*, stderr: bool = False) -> Console:
    console = Console(stderr=stderr)
    if not console.is_terminal:
        console.width = max(console.width, MIN_WIDTH_OFF_TERMINAL)
        console.soft_wrap = True
    return console


def report_table(title: str) -> Table:
    """The compact table every command's summary is drawn in, so they read alike."""
    return Table(
        title=title,
        title_justify="left",
        box=box.SIMPLE_HEAD,
        pad_edge=False,
        collapse_padding=True,
    )


def run_progress(console: Console) -> Progress:
    """The bar of one long run (a simulation, an emulation): its task's description names the
    stage, its ``clock`` field says where the run is. On a terminal only (a log gets the
    report alone); it goes away when the run ends."""
    return Progress(
        TextColumn("[bold]{task.description}"),
        BarColumn(bar_width=None),
        TextColumn("{task.fields[clock]}"),
        TimeElapsedColumn(),
        TextColumn("ETA"),
        TimeRemainingColumn(),
        console=console,
        transient=True,
        disable=not console.is_terminal,
    )

"""The console the commands print to. On a terminal rich fits its width; into a file, a pipe or
a CI log it would squeeze tables and progress lines into 80 columns and cut their figures
("2000/2…"), so there it gets at least 120, and a line longer than that (a summary naming a
long path) stays one line instead of being broken at a space. A table printed with
:func:`print_table` is never cut, on a terminal either."""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator

from rich import box
from rich.console import Console
from rich.measure import Measurement
from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn, TimeRemainingColumn
from rich.table import Table

MIN_WIDTH_OFF_TERMINAL = 120
UNBOUNDED_WIDTH = 1_000_000


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


def print_table(console: Console, table: Table) -> None:
    """Print ``table`` with every cell whole. Short of width, rich shrinks columns below their
    content and ends the cells with "…", figures included ("9.7…"). Here the widest columns that
    can wrap (text, headers) give way first, none narrower than its longest word (its longest
    cell if it does not wrap), so figures stay whole; a table that cannot fit even so comes out
    wider than the console (its lines folded by the terminal) instead of cropped. The columns'
    widths are fixed on ``table``."""
    # Measured unbounded: a measurement is clamped to the width it is given.
    options = console.options.update_width(UNBOUNDED_WIDTH)
    least: list[int] = []
    most: list[int] = []
    for column in table.columns:
        cells = [Measurement.get(console, options, cell) for cell in (column.header, *column.cells)]
        widest = column.width or max(cell.maximum for cell in cells)
        narrowest = widest if column.no_wrap else max(cell.minimum for cell in cells)
        least.append(min(max(narrowest, column.min_width or 0), widest))
        most.append(widest)
    # Padding and rules: what the table takes beyond its cells.
    frame = Measurement.get(console, options, table).maximum - sum(most)
    widths = list(most)
    excess = sum(widths) + frame - console.width
    while excess > 0:
        shrinkable = [i for i, (w, lo) in enumerate(zip(widths, least, strict=True)) if w > lo]
        if not shrinkable:
            break
        widths[max(shrinkable, key=lambda i: widths[i])] -= 1
        excess -= 1
    for column, width in zip(table.columns, widths, strict=True):
        column.width = width
    if sum(widths) + frame > console.width:
        # Fitted to the console, rich would shrink the columns anyway.
        table.width = sum(widths) + frame
    console.print(table, crop=False)


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


@contextlib.contextmanager
def stage_bar(description: str) -> Iterator[Callable[[int, int], None]]:
    """A bar with the elapsed time while a stage runs (a design of thousands of points takes
    minutes to generate and to measure, and planning a campaign generates its designs); on a
    terminal only, gone when the stage ends. The stage may tell it (steps done, steps expected)
    through the function it yields, as WSP's search does: the bar then fills and shows the time
    left."""
    with run_progress(command_console(stderr=True)) as bar:
        task = bar.add_task(description, total=None, clock="")

        def told(done: int, expected: int) -> None:
            bar.update(task, completed=done, total=expected, clock=f"step {done}/{expected}")

        yield told

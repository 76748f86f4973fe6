"""The one report a command gives when Ctrl-C ends it, and whether it has been given.

A KeyboardInterrupt that reaches typer — Ctrl-C while the command line is parsed, or in a
command with nothing to undo — ends the process with code 130 and says nothing (typer's
``_main`` turns it into ``Exit(130)`` since typer 0.28; before, click printed "Aborted!" and
exited 1). The console script reports those itself
(``mptcplab.entry``); a command that stops on Ctrl-C and reports why reports through here, so
the console script does not say it twice."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from rich.console import Console

_reported = False


def report_interrupted(message: str = "interrupted", console: Console | None = None) -> None:
    """Tell the user the command stopped on Ctrl-C: ``message`` in yellow on standard error,
    or printed (rich markup and all) on ``console``."""
    global _reported
    if console is None:
        import typer

        typer.secho(message, fg=typer.colors.YELLOW, err=True)
    else:
        console.print(message, highlight=False)
    _reported = True


def interruption_reported() -> bool:
    return _reported

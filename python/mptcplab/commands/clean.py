"""``mptcplab clean``: remove what crashed or killed emulator runs left behind (namespaces,
linkem and traffic processes, run directories, coupled congestion-control registrations)."""

from __future__ import annotations

import sys
from typing import Annotated

import typer


def clean_command(
    force: Annotated[
        bool,
        typer.Option("--force", help="Also tear down runs that still look alive."),
    ] = False,
) -> None:
    """Remove what crashed or killed emulator runs left behind."""
    import os

    from mptcplab.backends.emu import cleanup

    if os.geteuid() != 0:
        typer.secho("error: mptcplab clean needs root", fg=typer.colors.RED, err=True)
        sys.exit(1)  # not typer.Exit, which the CLI's non-standalone mode would turn into 0
    lines = cleanup.clean_all(force=force)
    for line in lines:
        typer.echo(line)
    if not lines:
        typer.echo("nothing to clean")


def register(app: typer.Typer) -> None:
    app.command("clean")(clean_command)

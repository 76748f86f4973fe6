"""``mptcplab doctor``: what the emulator needs, what this machine has, and how to fix what is
missing. Exit code 1 when the emulator cannot run here."""

from __future__ import annotations

import sys

import typer
from rich import box
from rich.table import Table

from mptcplab.commands.console import command_console


def doctor_command() -> None:
    """Check whether this machine can run the emulator (mptcplab emu)."""
    from mptcplab.backends.emu.checks import run_checks

    checks = run_checks()
    table = Table(title="mptcplab doctor", title_justify="left", box=box.SIMPLE_HEAD)
    table.add_column("check", no_wrap=True)
    table.add_column("status", no_wrap=True)
    table.add_column("found")
    table.add_column("fix")
    for c in checks:
        if c.ok:
            status = "[green]ok[/green]"
        elif c.required:
            status = "[red]missing[/red]"
        else:
            status = "[yellow]warning[/yellow]"
        table.add_row(c.name, status, c.found, "" if c.ok else c.fix)
    console = command_console()
    console.print(table)
    blocking = [c.name for c in checks if c.required and not c.ok]
    if blocking:
        console.print(f"[red]the emulator cannot run here:[/red] missing {', '.join(blocking)}")
        sys.exit(1)  # not typer.Exit, which the CLI's non-standalone mode would turn into 0
    console.print("[green]the emulator can run here[/green]")


def register(app: typer.Typer) -> None:
    app.command("doctor")(doctor_command)

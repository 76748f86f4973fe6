"""The ``mptcplab`` command: a thin adapter over the library.

Each sub-command lives in its own module under ``mptcplab.commands`` and exposes
``register(app)``; this file only collects them and turns :class:`UserError` into a one-line
message with exit code 2.
"""

from __future__ import annotations

import importlib
import inspect
import sys

import typer

from mptcplab.errors import UserError

app = typer.Typer(
    name="mptcplab",
    help="Multipath TCP workbench: simulate, emulate, design experiments, report.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)

# Order is the order of `mptcplab --help`.
COMMAND_MODULES = (
    "sim",
    "emu",
    "design",
    "campaign",
    "report",
    "compare",
    "metrics",
    "doctor",
    "clean",
    "perf",
)


def _register_commands() -> None:
    for name in COMMAND_MODULES:
        module_name = f"mptcplab.commands.{name}"
        try:
            module = importlib.import_module(module_name)
        except ModuleNotFoundError as exc:
            if exc.name == module_name:
                continue  # that command is not part of this build
            raise
        module.register(app)


def _unwrap(doc: str) -> str:
    """A docstring's paragraphs each on one line: the help formatter keeps single line breaks
    after the first paragraph, which the terminal's own wrapping then leaves mid-sentence."""
    paragraphs = inspect.cleandoc(doc).split("\n\n")
    return "\n\n".join(" ".join(p.split()) for p in paragraphs)


def _unwrap_help(typer_app: typer.Typer) -> None:
    for command in typer_app.registered_commands:
        if command.help is None and command.callback is not None and command.callback.__doc__:
            command.help = _unwrap(command.callback.__doc__)
    for group in typer_app.registered_groups:  # sub-commands (mptcplab perf server, ...)
        if group.typer_instance is not None:
            _unwrap_help(group.typer_instance)


_register_commands()
_unwrap_help(app)


def main() -> None:
    try:
        # Standalone mode: click reports usage errors (exit 2) and honours typer.Exit codes;
        # our own UserError passes through it and is reported here.
        app()
    except UserError as exc:
        for problem in exc.problems():
            typer.secho(f"error: {problem}", fg=typer.colors.RED, err=True)
        sys.exit(2)


if __name__ == "__main__":
    main()

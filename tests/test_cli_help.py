"""``mptcplab CMD --help``: each paragraph of a command's description wraps at the terminal's
width, not at the docstring's line breaks."""

from __future__ import annotations

import inspect
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from mptcplab.cli import app

ROOT = Path(__file__).resolve().parents[1]
COMMANDS = {c.name: c.callback for c in app.registered_commands if c.name and c.callback}


@pytest.mark.parametrize("name", ["run", "design", "report"])
def test_a_paragraph_is_one_line_on_a_wide_terminal(name: str) -> None:
    doc = inspect.cleandoc(COMMANDS[name].__doc__ or "")
    later = [" ".join(p.split()) for p in doc.split("\n\n")[1:]]
    assert later, f"{name}'s docstring has no second paragraph to check"
    env = dict(os.environ, PYTHONPATH=str(ROOT / "python"), COLUMNS="400", NO_COLOR="1")
    out = subprocess.run(
        [sys.executable, "-m", "mptcplab.cli", name, "--help"],
        capture_output=True,
        text=True,
        env=env,
        check=True,
    ).stdout
    lines = [line.strip() for line in out.splitlines()]
    for paragraph in later:
        assert paragraph in lines, f"{paragraph!r} not on one line of:\n{out}"


def _options_with_brackets() -> list[tuple[list[str], str]]:
    """(command path, option help) for every option whose help shows something in brackets,
    which the help formatter's markup would take for a style tag unless escaped."""
    import typer

    found: list[tuple[list[str], str]] = []

    def walk(command: Any, path: list[str]) -> None:  # typer's own click types
        for param in command.params:
            text = getattr(param, "help", None) or ""
            if "[" in text:
                found.append((path, text.replace("\\[", "[")))
        for name, sub in getattr(command, "commands", {}).items():
            walk(sub, [*path, name])

    walk(typer.main.get_command(app), [])
    return found


@pytest.mark.parametrize(
    ("path", "text"),
    [
        pytest.param(path, text, id=f"{' '.join(path)}: {text[:30]}")
        for path, text in _options_with_brackets()
    ],
)
def test_an_option_help_shows_its_brackets(path: list[str], text: str) -> None:
    env = dict(os.environ, PYTHONPATH=str(ROOT / "python"), COLUMNS="1000", NO_COLOR="1")
    out = subprocess.run(
        [sys.executable, "-m", "mptcplab.cli", *path, "--help"],
        capture_output=True,
        text=True,
        env=env,
        check=True,
    ).stdout
    shown = " ".join(" ".join(line.strip(" │") for line in out.splitlines()).split())
    assert " ".join(text.split()) in shown, f"{text!r} not in:\n{out}"

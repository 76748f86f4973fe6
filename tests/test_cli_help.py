"""``mptcplab CMD --help``: each paragraph of a command's description wraps at the terminal's
width, not at the docstring's line breaks."""

from __future__ import annotations

import inspect
import os
import subprocess
import sys
from pathlib import Path

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

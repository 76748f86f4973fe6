"""The ``mptcplab`` console script. Ctrl-C while the interpreter still imports the library
(a second or more on a busy machine) ends the command as Ctrl-C during a run does —
"interrupted", exit code 130 — rather than with a traceback of whichever import it hit."""

from __future__ import annotations

import sys


def main() -> None:
    try:
        from mptcplab.cli import main as run_command
    except KeyboardInterrupt:
        sys.stderr.write("interrupted\n")
        raise SystemExit(130) from None
    run_command()

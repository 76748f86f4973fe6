"""The ``mptcplab`` console script. Ctrl-C while the interpreter still imports the library
(a second or more on a busy machine), or while the command line is being set up, ends the
command as Ctrl-C during a run does — "interrupted", exit code 130 — rather than with a
traceback of whichever import it hit, or not at all: a library that catches everything around
an optional import swallows the KeyboardInterrupt, and the command would then start its run as
if nothing had been pressed. The handler below remembers the key as well as raising it."""

from __future__ import annotations

import signal
import sys
from types import FrameType
from typing import NoReturn


def _interrupted() -> NoReturn:
    sys.stderr.write("interrupted\n")
    raise SystemExit(130) from None


def main() -> None:
    pressed = False

    def on_ctrl_c(signum: int, frame: FrameType | None) -> None:
        nonlocal pressed
        pressed = True
        raise KeyboardInterrupt

    signal.signal(signal.SIGINT, on_ctrl_c)
    try:
        from mptcplab.cli import main as run_command
    except KeyboardInterrupt:
        _interrupted()
    if pressed:
        _interrupted()
    signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        run_command()
    except KeyboardInterrupt:
        # Between the imports and a command's own handling (the command line's set-up).
        _interrupted()

"""The ``mptcplab`` console script. Ctrl-C while the interpreter still imports the library
(a second or more on a busy machine), or while the command line is being set up, ends the
command as Ctrl-C during a run does — "interrupted", exit code 130 — rather than with a
traceback of whichever import it hit, or not at all. A KeyboardInterrupt raised inside an
import does not always arrive as one: a library that catches everything around an optional
import swallows it (the command would then start its run as if nothing had been pressed), a
class body turns it into a RuntimeError ("Error calling __set_name__"), and one raised in a
callback of the import machinery is printed as "Exception ignored" and dropped. The handler
below therefore remembers the key as well as raising it, and whatever ends the start-up after
the key was pressed is reported as the interruption it is — including typer's silent exit 130,
which is how a KeyboardInterrupt ends that reaches typer while it parses the command line or
from a command that does not catch it. The handler is installed as this module
loads, before anything slower than the modules the interpreter already holds is imported."""

from __future__ import annotations

import signal
import sys
from types import FrameType
from typing import NoReturn

_pressed = False


def _on_ctrl_c(signum: int, frame: FrameType | None) -> None:
    global _pressed
    _pressed = True
    raise KeyboardInterrupt


signal.signal(signal.SIGINT, _on_ctrl_c)


def _quiet_about_ctrl_c(unraisable: sys.UnraisableHookArgs) -> None:
    """The interpreter's report of an exception it cannot raise, except a KeyboardInterrupt
    (the key is acted on all the same)."""
    if not isinstance(unraisable.exc_value, KeyboardInterrupt):
        sys.__unraisablehook__(unraisable)


def _interrupted() -> NoReturn:
    sys.stderr.write("interrupted\n")
    raise SystemExit(130) from None


def main() -> None:
    sys.unraisablehook = _quiet_about_ctrl_c
    try:
        from mptcplab.cli import main as run_command

        if _pressed:
            raise KeyboardInterrupt  # one the import swallowed
        # The commands stop on KeyboardInterrupt; those with more to undo install their own
        # handlers over this one.
        run_command()
    except SystemExit as exc:
        # typer ends a KeyboardInterrupt that reaches it with a silent exit 130 (see
        # mptcplab.commands.interruption); a command's own report is not repeated.
        if _pressed and exc.code == 130:
            from mptcplab.commands.interruption import interruption_reported

            if not interruption_reported():
                _interrupted()
        raise
    except BaseException:
        if _pressed:
            _interrupted()
        raise

"""The console script's entry point and Ctrl-C before a command runs.

A library that wraps an optional import in a bare ``except`` swallows the KeyboardInterrupt of
a Ctrl-C pressed while it imports; the command must still end "interrupted" with code 130
rather than go on to start its run. The cases run in a child interpreter whose ``mptcplab.cli``
is a stand-in: importing it delivers SIGINT to the process, then lets the KeyboardInterrupt
through, swallows it, turns it into a RuntimeError (as a class body does when the key lands in
``__set_name__``), or takes it inside a callback whose exception Python can only report as
"Exception ignored"; its ``main`` prints "ran" (what must not happen)."""

from __future__ import annotations

import subprocess
import sys
import textwrap

import pytest

CHILD = textwrap.dedent(
    """
    import os, signal, sys, time, weakref
    from importlib.abc import Loader, MetaPathFinder
    from importlib.util import spec_from_loader

    MODE = {mode!r}

    def ctrl_c():
        os.kill(os.getpid(), signal.SIGINT)
        time.sleep(1)

    class Thing:
        pass

    class StandInCli(Loader):
        def create_module(self, spec):
            return None

        def exec_module(self, module):
            if MODE == "callback":
                thing = Thing()
                ref = weakref.ref(thing, lambda _: ctrl_c())
                del thing
            else:
                try:
                    ctrl_c()
                except BaseException as exc:
                    if MODE == "through":
                        raise
                    if MODE == "converted":
                        raise RuntimeError("Error calling __set_name__") from exc
            module.main = lambda: print("ran")

    class Finder(MetaPathFinder):
        def find_spec(self, name, path, target=None):
            if name == "mptcplab.cli":
                return spec_from_loader(name, StandInCli())
            return None

    sys.meta_path.insert(0, Finder())
    from mptcplab.entry import main
    main()
    """
)


@pytest.mark.parametrize("mode", ["through", "swallowed", "converted", "callback"])
def test_ctrl_c_during_the_imports_ends_interrupted(mode: str) -> None:
    proc = subprocess.run(
        [sys.executable, "-c", CHILD.format(mode=mode)],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode == 130, (proc.returncode, proc.stdout, proc.stderr)
    assert proc.stderr.strip() == "interrupted"
    assert "ran" not in proc.stdout


# The real command line, with commands added for the test: Ctrl-C lands while typer converts an
# option's value ("parsing"), inside a command that does not catch it ("uncaught"), in one that
# reports it itself ("reported"), or in one for which Ctrl-C is the normal way out ("clean").
TYPER_CHILD = textwrap.dedent(
    """
    import os, signal, sys, time
    from typing import Annotated

    import typer

    from mptcplab.entry import main
    from mptcplab.cli import app
    from mptcplab.commands.interruption import report_interrupted

    def ctrl_c():
        os.kill(os.getpid(), signal.SIGINT)
        time.sleep(1)

    def while_parsing(value: int) -> int:
        ctrl_c()
        return value

    @app.command("parsing")
    def parsing(n: Annotated[int, typer.Option(callback=while_parsing)] = 1) -> None:
        print("ran")

    @app.command("uncaught")
    def uncaught() -> None:
        ctrl_c()
        print("ran")

    @app.command("reported")
    def reported() -> None:
        try:
            ctrl_c()
        except KeyboardInterrupt:
            report_interrupted("interrupted; the store keeps what finished")
            raise SystemExit(130) from None

    @app.command("clean")
    def clean() -> None:
        try:
            ctrl_c()
        except KeyboardInterrupt:
            print("stopped")

    sys.argv = ["mptcplab", {command!r}]
    main()
    """
)


@pytest.mark.parametrize(
    ("command", "code", "stdout", "stderr"),
    [
        ("parsing", 130, "", "interrupted"),
        ("uncaught", 130, "", "interrupted"),
        ("reported", 130, "", "interrupted; the store keeps what finished"),
        ("clean", 0, "stopped", ""),
    ],
)
def test_ctrl_c_that_reaches_typer_is_reported_once(
    command: str, code: int, stdout: str, stderr: str
) -> None:
    proc = subprocess.run(
        [sys.executable, "-c", TYPER_CHILD.format(command=command)],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert (proc.returncode, proc.stdout.strip(), proc.stderr.strip()) == (code, stdout, stderr)

"""The console script's entry point and Ctrl-C before a command runs.

A library that wraps an optional import in a bare ``except`` swallows the KeyboardInterrupt of
a Ctrl-C pressed while it imports; the command must still end "interrupted" with code 130
rather than go on to start its run. The cases run in a child interpreter whose ``mptcplab.cli``
is a stand-in: importing it delivers SIGINT to the process, then either swallows the
KeyboardInterrupt or lets it through; its ``main`` prints "ran" (what must not happen)."""

from __future__ import annotations

import subprocess
import sys
import textwrap

import pytest

CHILD = textwrap.dedent(
    """
    import os, signal, sys, time, types
    from importlib.abc import Loader, MetaPathFinder
    from importlib.util import spec_from_loader

    SWALLOW = {swallow}

    class StandInCli(Loader):
        def create_module(self, spec):
            return None

        def exec_module(self, module):
            try:
                os.kill(os.getpid(), signal.SIGINT)
                time.sleep(1)
            except BaseException:
                if not SWALLOW:
                    raise
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


@pytest.mark.parametrize("swallow", [True, False])
def test_ctrl_c_during_the_imports_ends_interrupted(swallow: bool) -> None:
    proc = subprocess.run(
        [sys.executable, "-c", CHILD.format(swallow=swallow)],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode == 130, (proc.returncode, proc.stdout, proc.stderr)
    assert proc.stderr.strip() == "interrupted"
    assert "ran" not in proc.stdout

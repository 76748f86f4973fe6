"""Fixtures shared by every test directory."""

from __future__ import annotations

import signal
import subprocess
import sys
from collections.abc import Callable

import pytest
from hypothesis import settings

# `make test` (CI) runs the property tests on hypothesis's fixed examples, so that a pass is a
# pass on every machine; `make explore` (or plain pytest) draws new ones, which is how new
# counterexamples are found.
settings.register_profile("derandomized", derandomize=True)

# A shell starts a background job (`make test &`, `nohup`, some CI runners) with SIGINT
# ignored, and every process it starts inherits that: the tests that send a child Ctrl-C then
# waited for a run that never heard it. A handler, unlike an ignored signal, goes back to the
# default in a child at exec, so the children take Ctrl-C as from a terminal.
if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
    signal.signal(signal.SIGINT, signal.default_int_handler)

CliRunner = Callable[..., subprocess.CompletedProcess[str]]


@pytest.fixture
def run_cli() -> CliRunner:
    """Run ``mptcplab ARGS...`` as its own process (as a user would), output captured."""

    def run(
        *args: str, env: dict[str, str] | None = None, timeout: float = 60
    ) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "mptcplab.cli", *args],
            capture_output=True,
            text=True,
            timeout=timeout,
            check=False,
            env=env,
        )

    return run


@pytest.fixture
def cli(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]):
    """Run ``mptcplab ARGS`` in this process; return (exit code, stdout, stderr)."""
    from mptcplab import cli as cli_module

    def run(*args: str) -> tuple[int, str, str]:
        monkeypatch.setattr(sys, "argv", ["mptcplab", *args])
        code = 0
        try:
            cli_module.main()
        except SystemExit as exc:
            code = int(exc.code or 0)
        out, err = capsys.readouterr()
        return code, out, err

    return run

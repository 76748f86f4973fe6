"""Fixtures shared by every test directory."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Callable

import pytest

CliRunner = Callable[..., subprocess.CompletedProcess[str]]


@pytest.fixture
def run_cli() -> CliRunner:
    """Run ``mptcplab ARGS...`` as its own process (as a user would), output captured."""

    def run(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "mptcplab.cli", *args],
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
        )

    return run

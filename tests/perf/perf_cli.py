"""``mptcplab perf ARGS`` in a child process, as a user runs it, for the perf command tests."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def mptcplab(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ, PYTHONPATH=str(ROOT / "python"), NO_COLOR="1", COLUMNS="200")
    return subprocess.run(
        [sys.executable, "-m", "mptcplab.cli", "perf", *args],
        capture_output=True,
        text=True,
        env=env,
        cwd=cwd,
        timeout=120,
    )

"""Every command line pays for what ``mptcplab.cli`` imports before it parses its arguments:
pandas, scipy and matplotlib took 0.7 s of the 1.3 s that import cost when the commands
imported them at the top, numpy 0.1-0.2 s of what was left. Commands that need them import
them when they run."""

from __future__ import annotations

import subprocess
import sys

HEAVY = ("pandas", "scipy", "matplotlib", "numpy")


def test_the_command_line_starts_without_the_analysis_libraries() -> None:
    probe = (
        "import sys, mptcplab.entry, mptcplab.cli\n"
        f"print(' '.join(m for m in {HEAVY!r} if m in sys.modules))\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, check=True
    ).stdout
    assert out.split() == [], out

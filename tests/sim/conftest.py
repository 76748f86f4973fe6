"""Make ``mptcplab`` importable from the source tree before the package is installed."""

import importlib.util
import sys
from pathlib import Path

if importlib.util.find_spec("mptcplab") is None:
    sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "python"))

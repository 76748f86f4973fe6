"""The parser every path argument and option of the command line goes through.

Click turns an empty argument into ``Path("")``, which is ``.``: ``mptcplab sim ''`` would then
complain about a directory the user never named, and ``-o ''`` would write into the working
directory's name. An empty path is refused where it is given, naming the parameter.
"""

from __future__ import annotations

from pathlib import Path

import typer

__all__ = ["path_value"]


def path_value(value: str | Path) -> Path:
    """``value`` as a path; an empty string is a usage error (exit code 2)."""
    if isinstance(value, Path):
        return value
    if not value.strip():
        raise typer.BadParameter("an empty path; expected a file name")
    return Path(value)

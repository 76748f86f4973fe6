"""An empty path on the command line is a usage error naming the parameter, not ``.``."""

from __future__ import annotations

import typing
from pathlib import Path
from typing import Any

import pytest
from typer.models import ParameterInfo

from mptcplab.cli import app
from mptcplab.commands.path_value import path_value

ROOT = Path(__file__).resolve().parents[1]
SCENARIO = str(ROOT / "scenarios" / "default.toml")


def _unchecked_path_params() -> list[str]:
    """``command parameter`` for every path-typed parameter not parsed by ``path_value``."""
    found: list[str] = []
    groups = [("", app)] + [(g.name or "", g.typer_instance) for g in app.registered_groups]
    for prefix, group in groups:
        assert group is not None
        for command in group.registered_commands:
            hints = typing.get_type_hints(command.callback, include_extras=True)
            for name, hint in hints.items():
                if typing.get_origin(hint) is not typing.Annotated:
                    continue
                base, *extras = typing.get_args(hint)
                if Path not in {base, *typing.get_args(base)}:  # Path, Path | None, list[Path]
                    continue
                info = next((e for e in extras if isinstance(e, ParameterInfo)), None)
                if info is None or info.parser is not path_value:
                    found.append(f"{prefix} {command.name} {name}".strip())
    return found


def test_no_path_parameter_bypasses_the_empty_path_check() -> None:
    assert _unchecked_path_params() == []


@pytest.mark.parametrize(
    ("args", "named"),
    [
        (["sim", ""], "'FILE'"),
        (["sim", SCENARIO, "-o", ""], "'-o' / '--output'"),
        (["run", ""], "'CAMPAIGN'"),
        (["report", "", "-o", "x.html"], "'STORE_OR_CAMPAIGN'"),
        (["export", "x.sqlite", "--csv", ""], "'--csv'"),
        (["perf", "matrix", "a.jsonl", ""], "'FILE'"),
    ],
)
def test_an_empty_path_names_its_parameter(cli: Any, args: list[str], named: str) -> None:
    code, out, err = cli(*args)
    text = " ".join((out + err).replace("│", " ").split())
    assert code == 2, text
    assert f"Invalid value for {named}: an empty path; expected a file name" in text, text
    assert "Traceback" not in text

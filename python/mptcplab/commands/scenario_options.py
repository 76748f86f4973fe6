"""Options shared by the commands that run one scenario (``mptcplab sim``, ``mptcplab emu``)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from mptcplab.errors import UserError

ScenarioFile = Annotated[Path, typer.Argument(help="Scenario file (.toml or .json).")]
JsonFlag = Annotated[
    bool, typer.Option("--json", help="Print the report as JSON instead of tables.")
]
SeedOption = Annotated[
    int | None, typer.Option("--seed", min=0, help="Replace the scenario's seed.")
]
DurationOption = Annotated[
    float | None,
    typer.Option("--duration", help="Replace the scenario's duration_s (seconds)."),
]
TraceOption = Annotated[
    str | None,
    typer.Option("--trace", help="Record traces: comma-separated cwnd,rwnd,queue,blocks."),
]
OutputOption = Annotated[
    Path | None, typer.Option("-o", "--output", help="Also write the report JSON here.")
]

TRACE_KINDS = ("cwnd", "rwnd", "queue", "blocks")


def parse_trace(value: str | None) -> list[str] | None:
    """``--trace cwnd,queue`` as a list; None when not given."""
    if value is None:
        return None
    names = [v.strip() for v in value.split(",") if v.strip()]
    for name in names:
        if name not in TRACE_KINDS:
            raise UserError(
                f"unknown trace {name!r}; expected a comma-separated list of "
                f"{', '.join(TRACE_KINDS)}",
                field="--trace",
            )
    return names

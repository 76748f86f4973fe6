"""``--set KEY=VALUE``, shared by the commands that read a campaign file (``run``, ``status``,
``design``): the file's keys changed for one command (:mod:`mptcplab.campaign.overrides`)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

if TYPE_CHECKING:
    from mptcplab.campaign.spec import Campaign

SetOption = Annotated[
    list[str] | None,
    typer.Option(
        "--set",
        metavar="KEY=VALUE",
        help="Set a key of the campaign file for this command, e.g. --set backend=emu "
        "--set scenario.scheduler=linger (repeatable; VALUE is read as TOML, a bare word as "
        "text).",
    ),
]


def load_campaign(path: Path, changes: list[str] | None) -> Campaign:
    """The campaign file at ``path`` with the ``--set`` options applied."""
    from mptcplab.campaign import load
    from mptcplab.campaign.overrides import parse_option

    return load(path, [parse_option(raw) for raw in changes or []])

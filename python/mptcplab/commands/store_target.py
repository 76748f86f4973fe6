"""The store a command reads: given directly (``.sqlite``) or as the campaign that writes it
(``.toml``), so that ``mptcplab report campaigns/x.toml`` works as ``mptcplab status`` does."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from mptcplab.commands.path_value import path_value
from mptcplab.errors import UserError

StoreOrCampaign = Annotated[
    Path,
    typer.Argument(
        metavar="STORE_OR_CAMPAIGN",
        help="A campaign store (.sqlite), or the campaign file (.toml) that writes it.",
        parser=path_value,
    ),
]


def resolve_store(target: Path) -> Path:
    """``target`` itself, or the store of the campaign ``target`` names."""
    if target.suffix != ".toml":
        return target
    from mptcplab.campaign import load
    from mptcplab.campaign.store import Store

    campaign = load(target)
    store = campaign.output
    # exists, not is_file: a directory there is refused by Store with its own message.
    if not store.exists():
        raise UserError(
            f"the campaign has stored no run yet (no store at {store}); "
            f"run it first: mptcplab run {target}",
            file=str(target),
        )
    with Store(store) as opened:
        opened.check_campaign(campaign.name, target)
    return store

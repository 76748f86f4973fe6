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


def relative_note(store: Path) -> str:
    """Why a store may be missing though its campaign ran: it ran from another folder."""
    return "" if store.is_absolute() else " (a relative output starts at the current folder)"


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
            f"the campaign has stored no run yet (no store at {store}{relative_note(store)}); "
            f"run it first: mptcplab run {target}",
            file=str(target),
        )
    with Store(store) as opened:
        opened.check_campaign(campaign.name, target)
        last = opened.campaign_text()
    if last is not None and last[1] != campaign.stored_text:
        warn_other_plan(target, last[1])
    return store


def warn_other_plan(target: Path, last_text: str, *, store: Path | None = None) -> None:
    """The store's plan, which the report, comparisons and exports follow, is the one its last
    run made; say so when that run's campaign is not the file as it reads now. With ``store``,
    for ``status``, which counts the runs of the file's plan instead, say that and where the
    store's own count is."""
    from mptcplab.campaign.runner import how_planned

    how = how_planned(target, last_text)
    if store is None:
        follows = (
            "this follows the store as that run left it (to plan it from the file as it is: "
            f"mptcplab run {target})"
        )
    else:
        follows = (
            "these counts are of the plan the file makes as it reads now (the store's own: "
            f"mptcplab status {store})"
        )
    typer.secho(
        f"warning: {target}: the store's runs were last planned {how}; {follows}",
        fg=typer.colors.YELLOW,
        err=True,
    )

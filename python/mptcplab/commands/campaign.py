"""``mptcplab run``, ``status`` and ``export``: execute a campaign, see how far it is, get its
runs as a table."""

from __future__ import annotations

import sys
from collections.abc import Iterable
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console
from rich.markup import escape
from rich.table import Table

from mptcplab.campaign.store import Store
from mptcplab.commands.campaign_file import SetOption, load_campaign
from mptcplab.commands.console import command_console, print_table, stage_bar
from mptcplab.commands.interruption import report_interrupted
from mptcplab.commands.path_value import path_value
from mptcplab.commands.published_table import print_published
from mptcplab.commands.store_target import (
    StoreOrCampaign,
    relative_note,
    resolve_store,
    warn_other_plan,
)
from mptcplab.errors import UserError
from mptcplab.outputs import check_writable


def run_command(
    campaign_file: Annotated[
        Path, typer.Argument(metavar="CAMPAIGN", help="Campaign file (.toml).", parser=path_value)
    ],
    jobs: Annotated[
        int | None,
        typer.Option("--jobs", "-j", min=1, help="Parallel runs (default: one per core)."),
    ] = None,
    executor: Annotated[
        str, typer.Option("--executor", help="Where runs execute: local or ray.")
    ] = "local",
    address: Annotated[
        str | None, typer.Option("--address", help="Ray cluster address (with --executor ray).")
    ] = None,
    output: Annotated[
        Path | None,
        typer.Option(
            "--output", "-o", help="Store path (default: the campaign's output).", parser=path_value
        ),
    ] = None,
    quiet: Annotated[bool, typer.Option("--quiet", "-q", help="No progress bar.")] = False,
    changes: SetOption = None,
) -> None:
    """Run a campaign: every run its store does not hold yet.

    Finished runs are skipped and failed ones retried; each finished run is committed at once,
    so an interrupted campaign resumes where it stopped. A campaign carrying published
    figures ends by printing them beside the median of its runs at their settings. Runs of a
    campaign changed with --set go to its store too, unless -o or --set output=PATH names
    another.
    """
    from mptcplab.campaign import CampaignInterrupted, run_campaign

    console = command_console(stderr=True)
    campaign = load_campaign(campaign_file, changes)
    try:
        summary = run_campaign(
            campaign,
            jobs=jobs,
            executor=executor,
            address=address,
            output=output,
            progress=not quiet,
            console=console,
        )
    except CampaignInterrupted as stop:
        s = stop.summary
        report_interrupted(
            f"[yellow]interrupted[/]: {s.completed + s.failed} runs committed to {s.store}; "
            "run the same command again to resume",
            console,
        )
        raise SystemExit(130) from None
    except KeyboardInterrupt:  # before the runs started, or while the workers were stopping
        report_interrupted(
            "[yellow]interrupted[/]: every run that finished is committed; "
            "run the same command again to resume",
            console,
        )
        raise SystemExit(130) from None
    done = summary.already_done + summary.completed
    console.print(
        f"{campaign.name}: {summary.planned} runs planned, {summary.already_done} already "
        f"stored, {summary.completed} completed now, {summary.failed} failed — "
        f"{done}/{summary.planned} done in {summary.store}"
    )
    if summary.failed:
        console.print(
            f"[red]{summary.failed} runs failed[/]: `mptcplab status {summary.store}` shows why; "
            "running the campaign again retries them"
        )
        raise SystemExit(1)
    print_published(summary.store)
    console.print(
        f"next: mptcplab report {summary.store} -o {summary.store.parent / 'report.html'}"
    )


def status_command(
    target: Annotated[
        Path,
        typer.Argument(
            metavar="STORE_OR_CAMPAIGN", help="A store (.sqlite) or a campaign.", parser=path_value
        ),
    ],
    changes: SetOption = None,
) -> None:
    """Show how far a campaign is: runs planned, done, failed, pending; recent failures."""
    from mptcplab.campaign.plan import merged_notice
    from mptcplab.campaign.runner import plan_campaign

    console = command_console()
    if changes and target.suffix != ".toml":
        raise UserError("changes a campaign file; a store is read as it is", field="--set")
    if target.suffix == ".toml":
        campaign = load_campaign(target, changes)
        with stage_bar(f"{campaign.name}: planning the runs") as told:
            plan, _, _ = plan_campaign(campaign, told)
        notice = merged_notice(campaign, plan)
        if notice is not None:
            console.print(f"[yellow]notice[/]: {escape(f'{campaign.name}: {notice}')}")
        keys = plan.unique_runs().keys()
        store_path = campaign.output
        if not store_path.exists():
            console.print(
                f"{campaign.name}: not started — {len(keys)} runs planned, store "
                f"{store_path} does not exist yet{relative_note(store_path)}"
            )
            return
        with Store(store_path) as store:
            store.check_campaign(campaign.name, target)
            last = store.campaign_text()
            if last is not None and last[1] != campaign.stored_text:
                warn_other_plan(target, last[1], store=store_path)
            _print_status(console, campaign.name, store_path, store, keys)
        return
    with Store(target) as store:
        _print_status(console, store.meta("campaign") or "?", target, store, None)


def _print_status(
    console: Console, name: str, path: Path, store: Store, keys: Iterable[str] | None
) -> None:
    """``keys``: the runs of the plan to count, by default the store's."""
    counts = store.counts(keys)
    planned = counts["planned"]
    share = 100.0 * counts["done"] / planned if planned else 0.0
    console.print(f"[bold]{escape(name)}[/] — {escape(str(path))}")
    console.print(
        f"  {planned} runs planned: [green]{counts['done']} done[/] ({share:.0f} %), "
        f"[red]{counts['failed']} failed[/], [yellow]{counts['pending']} pending[/]"
    )
    flagged = store.emulation_bottlenecked(keys)
    if flagged:
        console.print(
            f"  [yellow]{len(flagged)} of the runs done were flagged[/]: the emulator, not the "
            "network, was their bottleneck (its fidelity check), so they do not measure the "
            "kernel; a cross-validation leaves them out"
        )
    history = store.provenance()
    if history:
        last = history[-1]
        ended = last["ended_at"] or "not closed (interrupted or still running)"
        console.print(f"  last run: started {last['started_at']}, ended {ended}")
        console.print(
            f"            on {last['host']} ({last['executor']} × {last['jobs']}), "
            f"{last['backend_version']}"
        )
    failures = store.failures()
    if failures:
        table = Table("run key", "error", title="recent failures", title_justify="left")
        for key, error in failures:
            # The first line names the problem; more lines are further problems or detail.
            lines = error.splitlines() if error else [""]
            more = f" (+{len(lines) - 1} more lines in the store)" if len(lines) > 1 else ""
            table.add_row(key[:12], escape(lines[0] + more))
        print_table(console, table)


def export_command(
    target: StoreOrCampaign,
    csv: Annotated[
        Path | None,
        typer.Option(
            "--csv", help="Write a CSV file here (- for standard output).", parser=path_value
        ),
    ] = None,
    parquet: Annotated[
        Path | None, typer.Option("--parquet", help="Write a Parquet file here.", parser=path_value)
    ] = None,
) -> None:
    """Export a store's runs (factor values, levels, status, metrics) as CSV or Parquet."""
    from mptcplab.analysis.tables import export

    if (csv is None) == (parquet is None):
        raise UserError("give exactly one of --csv OUT or --parquet OUT", field="export")
    out, fmt = (csv, "csv") if csv is not None else (parquet, "parquet")
    assert out is not None
    if str(out) == "-":
        if fmt == "parquet":
            raise UserError(
                "Parquet is binary: give a file (--csv - writes CSV to standard output)",
                field="--parquet",
            )
        rows = export(resolve_store(target), sys.stdout, fmt=fmt)
        command_console(stderr=True).print(f"wrote {rows} runs to standard output")
        return
    store = resolve_store(target)
    check_writable(out, "the export", reads=(store, target))
    rows = export(store, out, fmt=fmt)
    command_console(stderr=True).print(f"wrote {rows} runs to {out}")


def register(app: typer.Typer) -> None:
    app.command("run")(run_command)
    app.command("status")(status_command)
    app.command("export")(export_command)

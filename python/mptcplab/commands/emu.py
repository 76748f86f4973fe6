"""``mptcplab emu FILE``: run one scenario on the real kernel in emulated networks and print
what it measured (the simulator's tables, then the emulation's fidelity)."""

from __future__ import annotations

import json
import sys
from typing import Any

import typer
from rich.console import Console
from rich.markup import escape
from rich.table import Table

from mptcplab.commands.console import command_console, print_table, report_table, run_progress
from mptcplab.commands.interruption import report_interrupted
from mptcplab.commands.scenario_options import (
    DurationOption,
    FieldOption,
    JsonFlag,
    OutputOption,
    ScenarioArgument,
    SeedOption,
    TraceOption,
    blame_options,
    parse_trace,
    with_fields,
    write_report,
)
from mptcplab.commands.sim import print_report
from mptcplab.errors import UserError
from mptcplab.outputs import check_writable


def _us(value: float | None) -> str:
    return "" if value is None else f"{value:,.0f}"


def _lateness_cell(lateness: dict[str, Any]) -> str:
    # A direction that released no packet (the reverse of a link whose ACKs pass unqueued)
    # has no lateness, not one of 0 µs.
    if not lateness.get("count"):
        return "none measured"
    return f"{_us(lateness['p50_us'])} / {_us(lateness['p99_us'])} / {_us(lateness['max_us'])}"


def fidelity_table(report: dict[str, Any]) -> Table:
    fid = report["fidelity"]
    table = report_table("emulation fidelity")
    table.add_column("link", no_wrap=True)
    for name in (
        "configured\nMbit/s",
        "achieved busy\nMbit/s",
        "lateness µs\np50 / p99 / max",
        "ACK lateness µs\np50 / p99 / max",
        "ok",
    ):
        table.add_column(name, justify="right")
    for link in fid["links"]:
        fwd, rev = link["lateness_us"], link["reverse_lateness_us"]
        achieved = link["achieved_busy_mbps"]
        table.add_row(
            escape(link["id"]),
            f"{link['configured_mbps']:g}",
            "" if achieved is None else f"{achieved:.3f}",
            _lateness_cell(fwd),
            _lateness_cell(rev),
            "yes" if link["ok"] else "[red]no[/red]",
        )
    return table


def print_fidelity(report: dict[str, Any], console: Console) -> None:
    fid = report["fidelity"]
    print_table(console, fidelity_table(report))
    rt = "real-time" if fid["realtime_scheduling"] else "ordinary scheduling"
    console.print(
        f"linkem CPU {fid['linkem_cpu_percent']:.1f}% of a core ({rt}) · "
        f"kernel {report['backend']['kernel_release']} · run {report['backend']['run_id']}",
        style="dim",
        highlight=False,
    )
    if fid["emulation_bottleneck"]:
        console.print(
            "[bold red]warning:[/bold red] the emulator was a bottleneck of this run; "
            "its figures describe the emulator as much as the network:"
        )
        for p in fid["problems"]:
            console.print(f"  - {p}", highlight=False)


def emu_command(
    file: ScenarioArgument,
    json_out: JsonFlag = False,
    seed: SeedOption = None,
    duration: DurationOption = None,
    trace: TraceOption = None,
    output: OutputOption = None,
    changes: FieldOption = None,
) -> None:
    """Run a scenario on the real Linux kernel in emulated networks (needs root)."""
    from mptcplab import emu

    traces = parse_trace(trace)
    scenario = with_fields(file, changes)
    if output is not None:
        # Before the run, not after its real time.
        check_writable(output, "the report", reads=(file,))
    try:
        with run_progress(command_console(stderr=True)) as bar:
            task = bar.add_task("setting up", total=None, clock="")

            def progress(stage: str, traffic_s: float, duration_s: float) -> None:
                clock = f"{traffic_s:,.1f}/{duration_s:,.1f} s" if stage == "traffic" else ""
                bar.update(
                    task, description=stage, completed=traffic_s, total=duration_s, clock=clock
                )

            report = emu.run(
                scenario, seed=seed, duration_s=duration, trace=traces, progress=progress
            )
    except UserError as exc:
        raise blame_options(exc, file, duration=duration, seed=seed, traces=traces) from None
    except emu.EmulatorError as exc:
        typer.secho(f"error: {exc}", fg=typer.colors.RED, err=True)
        sys.exit(1)
    except KeyboardInterrupt:  # Ctrl-C or SIGTERM; the run has been torn down
        report_interrupted()
        sys.exit(130)
    text = json.dumps(report, indent=2, allow_nan=False)
    write_report(text, output)
    if report["fidelity"]["emulation_bottleneck"]:
        typer.secho(
            "warning: the emulator was a bottleneck of this run: "
            + "; ".join(report["fidelity"]["problems"]),
            fg=typer.colors.YELLOW,
            err=True,
        )
    if json_out:
        sys.stdout.write(text + "\n")
        return
    from mptcplab.results import Report

    console = command_console()
    print_report(Report.from_dict(report), console)
    console.print()
    print_fidelity(report, console)


def register(app: typer.Typer) -> None:
    app.command("emu")(emu_command)

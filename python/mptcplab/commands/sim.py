"""``mptcplab sim FILE``: run one scenario on the simulator and print what it measured."""

from __future__ import annotations

import math
import os
import sys
import threading
from collections.abc import Callable
from statistics import median
from typing import TYPE_CHECKING, Any, NoReturn, TypeVar

import typer
from rich.console import Console
from rich.markup import escape
from rich.table import Table

from mptcplab.analysis.metrics import jain_index
from mptcplab.commands.console import command_console, print_table, report_table, run_progress
from mptcplab.commands.interruption import report_interrupted
from mptcplab.commands.scenario_options import (
    TRACE_KINDS,
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
from mptcplab.errors import UserError
from mptcplab.outputs import check_writable

if TYPE_CHECKING:
    # The fair shares need numpy, a fifth of a second to import, and the report's model
    # pydantic: imported when a run or a table needs them, not by `mptcplab --help`.
    from mptcplab.analysis.fairshare import FairShare
    from mptcplab.results import FlowReport, Report

T = TypeVar("T")

# Rows of one flow entry in the table; past them one line sums up the rest. Drawing a row per
# flow of a population of thousands took longer than the run (20,000 rows: 34 s).
FLOWS_SHOWN_PER_ENTRY = 20


def _fmt(value: float, digits: int = 2) -> str:
    return f"{value:,.{digits}f}"


def _latency(flow: FlowReport) -> str:
    if flow.block_latency is None or flow.block_latency.count == 0:
        return ""
    return f"{_fmt(flow.block_latency.p50_ms, 1)} / {_fmt(flow.block_latency.p99_ms, 1)}"


def _fair_shares(report: Report) -> FairShare | None:
    """The max-min fair shares, when they apply: they take every flow as greedy and active
    through the measurement window."""
    from mptcplab.analysis.fairshare import fair_share, shares_compare_with_goodput

    return fair_share(report.scenario) if shares_compare_with_goodput(report.scenario) else None


def _fair_cell(share: FairShare | None, flow_id: str) -> list[str]:
    """The fair-share cell of a row: none without the column."""
    return [] if share is None else [_fmt(share.of(flow_id), 3)]


def flows_table(report: Report) -> Table:
    """Per flow, then its subflows indented below it."""
    app_kinds = {f.id: f.app.kind for f in report.scenario.flows}

    def kind_of(flow_id: str) -> str:
        return app_kinds.get(flow_id.split("#", 1)[0], "bulk")

    blocks = any(kind_of(f.id) == "blocks" for f in report.flows)
    sized = any(kind_of(f.id) == "size" for f in report.flows)
    share = _fair_shares(report)
    table = report_table("flows")
    table.add_column("flow /\nsubflow", no_wrap=True)
    # "mptcp cubic" may go on two lines when the console is narrow.
    table.add_column("protocol\ncc")
    table.add_column("goodput\nMbit/s", justify="right")
    if share is not None:
        table.add_column("fair\nMbit/s", justify="right")
    for name in (
        "deliv.\nMB",
        "retx",
        "reinj",
        "rwnd\nlim s",
        "srtt\nms",
        "max cwnd\nKB",
    ):
        table.add_column(name, justify="right")
    if blocks:
        table.add_column("latency\np50/p99 ms", justify="right")
    if sized:
        table.add_column("completion\ns", justify="right")
    shown: dict[str, int] = {}  # entry id -> its flows given a row so far
    for flow in report.flows:
        entry = flow.id.split("#", 1)[0]
        shown[entry] = shown.get(entry, 0) + 1
        if shown[entry] > FLOWS_SHOWN_PER_ENTRY:
            continue
        row = [
            escape(flow.id),
            f"{flow.protocol} {flow.cc}",
            _fmt(flow.goodput_mbps, 3),
            *_fair_cell(share, flow.id),
            _fmt(flow.bytes_delivered / 1e6, 2),
            str(flow.retransmits),
            str(flow.reinjections),
            _fmt(flow.rwnd_limited_s, 2),
            "",
            "",
        ]
        if blocks:
            row.append(_latency(flow))
        if sized:
            done = flow.completion_s
            unfinished = "unfinished" if kind_of(flow.id) == "size" else ""
            row.append(_fmt(done, 3) if done is not None else unfinished)
        table.add_row(*row, style="bold")
        for sub in flow.subflows:
            sub_row = [
                escape(f"  {sub.index}: {' > '.join(sub.path)}"),
                "",
                _fmt(sub.goodput_mbps, 3),
                *([] if share is None else [""]),
                _fmt(sub.bytes_delivered / 1e6, 2),
                str(sub.retransmits),
                "",
                "",
                _fmt(sub.mean_srtt_ms, 1),
                _fmt(sub.max_cwnd_bytes / 1e3, 1),
            ]
            sub_row += [""] * (int(blocks) + int(sized))
            table.add_row(*sub_row)
    rest = [
        _rest_of_entry(report, entry)
        for entry, count in shown.items()
        if count > FLOWS_SHOWN_PER_ENTRY
    ]
    if rest:
        table.caption = "\n".join(rest)
        table.caption_justify = "left"
    return table


def _rest_of_entry(report: Report, entry: str) -> str:
    """The line that stands for the flows of ``entry`` past the first
    :data:`FLOWS_SHOWN_PER_ENTRY`."""
    rest = report.group(entry)[FLOWS_SHOWN_PER_ENTRY:]
    goodputs = [f.goodput_mbps for f in rest]
    spread = " / ".join(_fmt(v, 3) for v in (min(goodputs), median(goodputs), max(goodputs)))
    return (
        f"{entry}: {len(rest):,} more flows ({rest[0].id} … {rest[-1].id}), goodput min / median "
        f"/ max {spread} Mbit/s; --json has every flow"
    )


def groups_table(report: Report) -> Table | None:
    """One row per flow entry with ``count`` > 1 (a user population): how its flows shared.
    ``None`` when the scenario has no such entry."""
    populations = [f for f in report.scenario.flows if f.count > 1]
    if not populations:
        return None
    share = _fair_shares(report)
    table = report_table("flow groups (count > 1)")
    table.add_column("group", no_wrap=True)
    columns = ("flows", "total\nMbit/s", "mean\nMbit/s", "min\nMbit/s", "max\nMbit/s", "Jain")
    for name in (*columns, *([] if share is None else ["fair\nMbit/s"])):
        table.add_column(name, justify="right")
    for entry in populations:
        goodputs = [f.goodput_mbps for f in report.group(entry.id)]
        jain = jain_index(goodputs)
        table.add_row(
            escape(entry.id),
            str(len(goodputs)),
            _fmt(sum(goodputs), 3),
            _fmt(sum(goodputs) / len(goodputs), 3),
            _fmt(min(goodputs), 3),
            _fmt(max(goodputs), 3),
            "" if math.isnan(jain) else f"{jain:.3f}",
            *_fair_cell(share, entry.id),
        )
    return table


def links_table(report: Report) -> Table:
    table = report_table("links")
    table.add_column("link", no_wrap=True)
    for name in ("utilization\n%", "drops", "loss rate\n%", "mean queue\npkts", "max queue\npkts"):
        table.add_column(name, justify="right")
    for link in report.links:
        table.add_row(
            escape(link.id),
            _fmt(100.0 * link.utilization, 1),
            str(link.drops),
            _fmt(100.0 * link.loss_rate, 3),
            _fmt(link.mean_queue_packets, 1),
            str(link.max_queue_packets),
        )
    return table


def footer(report: Report) -> str:
    parts = [f"{report.events:,} events", f"measured {report.measured_s:g} s"]
    if report.wall_s is not None:
        parts.append(f"wall {report.wall_s:.3f} s")
        if report.wall_s > 0:
            parts.append(f"{report.events / report.wall_s:,.0f} events/s")
    parts.append(f"seed {report.seed}")
    return " · ".join(parts)


def traces_note(report: Report) -> str | None:
    """What the requested traces hold; the tables do not show them, the JSON report does."""
    t = report.traces
    if t is None:
        return None
    parts = []
    # Every sampled kind the model has (srtt was once left out of a hand-written list).
    for name in TRACE_KINDS:
        series = getattr(t, name) if name != "blocks" else None
        if series:
            parts.append(f"{name} {len(series)} × {len(t.time_s)} samples")
    if t.blocks:
        parts.append(f"blocks {sum(len(b.done_s) for b in t.blocks)} latencies")
    elif "blocks" in report.scenario.trace and all(
        f.app.kind != "blocks" for f in report.scenario.flows
    ):
        parts.append('no blocks (no flow has a blocks application, app.kind = "blocks")')
    held = ", ".join(parts) if parts else "nothing (no sample fell in the run)"
    return f"traces (in the JSON report: --json or -o FILE): {held}"


def print_report(report: Report, console: Console | None = None) -> None:
    if console is None:
        console = command_console()
    print_table(console, flows_table(report))
    console.print()
    groups = groups_table(report)
    if groups is not None:
        print_table(console, groups)
        console.print()
    print_table(console, links_table(report))
    console.print()
    console.print(footer(report), style="dim", highlight=False)
    note = traces_note(report)
    if note is not None:
        console.print(note, style="dim", highlight=False, soft_wrap=True)


def _interruptible(call: Callable[[], T]) -> T:
    """``call()`` in a thread, so that Ctrl-C stops the command at once: Python raises
    KeyboardInterrupt in the main thread between bytecodes, and a call into the simulator
    (which holds no Python lock while it runs) returns only when the run is over. The thread
    is a daemon: the process exits without waiting for the run it abandons."""
    outcome: list[Any] = []

    def target() -> None:
        try:
            outcome.append((True, call()))
        except BaseException as exc:  # handed to the main thread as it is
            outcome.append((False, exc))

    worker = threading.Thread(target=target, name="mpsim", daemon=True)
    worker.start()
    while worker.is_alive():
        worker.join(0.2)
    ok, value = outcome[0]
    if not ok:
        raise value
    return value  # type: ignore[no-any-return]


def _exit_abandoning_the_run(code: int) -> NoReturn:
    """Leave at once, without the interpreter's shutdown: the abandoned run still calls its
    progress callback, and a call into an interpreter that is shutting down aborts the
    process. Nothing is left to clean up: the report is written only after a run ends."""
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code)


def sim_command(
    file: ScenarioArgument,
    json_out: JsonFlag = False,
    seed: SeedOption = None,
    duration: DurationOption = None,
    trace: TraceOption = None,
    output: OutputOption = None,
    changes: FieldOption = None,
) -> None:
    """Run a scenario on the packet-level simulator."""
    from mptcplab import sim

    traces = parse_trace(trace)
    scenario = with_fields(file, changes)
    if output is not None:
        check_writable(output, "the report", reads=(file,))
    try:
        with run_progress(command_console(stderr=True)) as bar:
            task = bar.add_task("simulating", total=None, clock="")

            def progress(simulated_s: float, duration_s: float, events: int) -> None:
                clock = f"{simulated_s:,.1f}/{duration_s:,.1f} s · {events:,} events"
                bar.update(task, completed=simulated_s, total=duration_s, clock=clock)

            report = _interruptible(
                lambda: sim.run(
                    scenario, seed=seed, duration_s=duration, trace=traces, progress=progress
                )
            )
    except UserError as exc:
        raise blame_options(exc, file, duration=duration, seed=seed, traces=traces) from None
    except sim.SimulatorUnavailable as exc:
        typer.secho(f"error: {exc}", fg=typer.colors.RED, err=True)
        raise typer.Exit(1) from None
    except KeyboardInterrupt:
        report_interrupted()
        _exit_abandoning_the_run(130)
    if json_out or output is not None:
        # Only when asked for: a long trace takes longer to write out than to simulate.
        text = report.to_json(indent=2)
        write_report(text, output)
        if json_out:
            sys.stdout.write(text + "\n")
    if not json_out:
        print_report(report)


def register(app: typer.Typer) -> None:
    app.command("sim")(sim_command)

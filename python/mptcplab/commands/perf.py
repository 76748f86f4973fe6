"""``mptcplab perf server|client|gain|matrix``: TCP and MPTCP transfers between real hosts and
the NorNet-style gain matrix they add up to (see :mod:`mptcplab.backends.perf`)."""

from __future__ import annotations

import json
import math
import socket
import sys
from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer
from rich.console import Console
from rich.markup import escape
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn

from mptcplab.backends.perf.sockets import MAX_BUFFER_BYTES
from mptcplab.backends.perf.wire import MAX_BLOCK_BYTES, MAX_DURATION_S, MIN_BLOCK_BYTES
from mptcplab.commands.console import command_console, report_table
from mptcplab.commands.interruption import report_interrupted
from mptcplab.commands.path_value import path_value
from mptcplab.errors import UserError

if TYPE_CHECKING:
    import pandas as pd

perf_app = typer.Typer(
    help="TCP and MPTCP transfers between real hosts, and the MPTCP/TCP gain matrix.",
    no_args_is_help=True,
)


class TransportChoice(StrEnum):
    tcp = "tcp"
    mptcp = "mptcp"


PortOption = Annotated[int, typer.Option("--port", "-p", min=0, max=65535, help="TCP port.")]


def _duration(value: float) -> float:
    # The server refuses any other: caught here, before a connection (or a whole series).
    if not 0 < value <= MAX_DURATION_S:
        raise UserError(
            f"expected seconds in (0, {MAX_DURATION_S:g}], got {value:g}", field="--duration"
        )
    return value


DurationOption = Annotated[
    float,
    typer.Option("--duration", "-t", callback=_duration, help="Seconds of sending per transfer."),
]
CcOption = Annotated[
    str | None, typer.Option("--cc", help="Congestion control (TCP_CONGESTION), e.g. cubic.")
]
SndbufOption = Annotated[
    int | None,
    typer.Option(
        "--sndbuf", min=1, max=MAX_BUFFER_BYTES, help="Fixed send buffer, bytes (else auto)."
    ),
]
RcvbufOption = Annotated[
    int | None,
    typer.Option(
        "--rcvbuf", min=1, max=MAX_BUFFER_BYTES, help="Fixed receive buffer, bytes (else auto)."
    ),
]
Ipv4Flag = Annotated[bool, typer.Option("-4", "--ipv4", help="IPv4 only.")]
Ipv6Flag = Annotated[bool, typer.Option("-6", "--ipv6", help="IPv6 only.")]


def _family(ipv4: bool, ipv6: bool) -> socket.AddressFamily | None:
    if ipv4 and ipv6:
        raise typer.BadParameter("give -4 or -6, not both")
    return socket.AF_INET if ipv4 else socket.AF_INET6 if ipv6 else None


def _check_cc(cc: str | None) -> None:
    from mptcplab.backends.perf.sockets import PerfError, check_congestion

    if cc is not None:
        try:
            check_congestion(cc)
        except PerfError as exc:
            raise UserError(str(exc), field="--cc") from None


def _check_local(address: str, option: str) -> None:
    from mptcplab.backends.perf.sockets import PerfError, check_local_address

    try:
        check_local_address(address)
    except PerfError as exc:
        raise UserError(str(exc), field=option) from None


def transfer_line(peer: tuple, answer: dict[str, Any]) -> str:
    """The server's line (console markup) for one transfer it answered."""
    if "error" in answer:
        # The error comes from the network: text, not markup.
        return f"[red]{escape(str(peer[0]) + ': ' + str(answer['error']))}[/red]"
    kind = "MPTCP" if answer["server_mptcp"] else "TCP"
    subflows = answer["server_subflows"]
    line = (
        f"{peer[0]}  {kind}"
        + (f" ({subflows} subflows)" if subflows else "")
        + f"  {answer['bytes_received']:,} bytes in {answer['receive_s']:.2f} s"
        + f"  {answer['goodput_mbps']:.3f} Mbit/s"
    )
    if not answer["complete"]:
        # The client stopped before the time its hello asked: not a measurement.
        return f"[yellow]{line}  (incomplete: the client closed early)[/yellow]"
    return line


def _of_family(address: str, family: socket.AddressFamily) -> bool:
    """Whether ``address`` may be of ``family``: a literal of it, or a host name."""
    from mptcplab.backends.perf.sockets import ip_version, version_of

    version = ip_version(address)
    return version is None or version == version_of(family)


def _check_family(address: str, family: socket.AddressFamily | None, option: str) -> None:
    """Refuse an address literal of the other family than -4/-6 asks: TCP from it would fail
    on every transfer."""
    from mptcplab.backends.perf.sockets import version_of

    if family is not None and not _of_family(address, family):
        wanted = version_of(family)
        raise UserError(
            f"{address!r} is not an IPv{wanted} address, and -{wanted} asks for IPv{wanted}",
            field=option,
        )


def _fail(message: str) -> None:
    typer.secho(f"error: {message}", fg=typer.colors.RED, err=True)
    sys.exit(1)


def _mbps(value: Any) -> str:
    return "" if value is None or not math.isfinite(value) else f"{value:.3f}"


def _gain_text(value: float) -> str:
    """A log gain; −∞ where MPTCP delivered nothing, blank where it was not measured."""
    if value == -math.inf:
        return "−∞"
    return "" if not math.isfinite(value) else f"{value:+.3f}"


@perf_app.command("server")
def server_command(
    bind: Annotated[
        str, typer.Option("--bind", "-B", help="Address to listen on (:: = every IPv6 and IPv4).")
    ] = "::",
    port: PortOption = 5301,
    rcvbuf: RcvbufOption = None,
) -> None:
    """Receive transfers until Ctrl-C (MPTCP, and plain TCP by fallback), one line per
    transfer."""
    from mptcplab.backends.perf.server import PerfError, PerfServer

    _check_local(bind, "--bind")
    console = command_console()

    def show(peer: tuple, answer: dict[str, Any]) -> None:
        console.print(transfer_line(peer, answer), highlight=False)

    try:
        server = PerfServer(bind, port, rcvbuf_bytes=rcvbuf, on_transfer=show)
    except PerfError as exc:
        _fail(str(exc))
        return
    what = "MPTCP and TCP" if server.transport == "mptcp" else "TCP only (no MPTCP here)"
    console.print(f"listening on [{bind}]:{server.port}, {what}; Ctrl-C ends", highlight=False)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        server.shutdown()


@perf_app.command("client")
def client_command(
    server: Annotated[str, typer.Argument(help="The perf server's host name or address.")],
    port: PortOption = 5301,
    transport: Annotated[
        TransportChoice, typer.Option("--transport", "-T", help="The protocol.")
    ] = TransportChoice.mptcp,
    duration: DurationOption = 10.0,
    bind: Annotated[
        str | None, typer.Option("--bind", "-B", help="Source address (the path, for TCP).")
    ] = None,
    ipv4: Ipv4Flag = False,
    ipv6: Ipv6Flag = False,
    cc: CcOption = None,
    sndbuf: SndbufOption = None,
    blocks: Annotated[
        int | None,
        typer.Option(
            "--blocks",
            min=MIN_BLOCK_BYTES,
            max=MAX_BLOCK_BYTES,
            help="Send blocks of this many bytes back to back and time each one.",
        ),
    ] = None,
    json_out: Annotated[bool, typer.Option("--json", help="Print the record as JSON.")] = False,
) -> None:
    """Send to a perf server for --duration seconds and print the receiver's goodput.

    With --blocks, each block's latency from the send call that wrote the previous block's last
    byte (as the simulator stamps it) to its complete read at the server (the two hosts' clocks
    matched at the start, to within half the shortest of eight round trips; exactly when both
    ends run on one host)."""
    from mptcplab.backends.perf.client import transfer
    from mptcplab.backends.perf.sockets import PerfError

    _check_cc(cc)
    if bind is not None:
        _check_local(bind, "--bind")
    # A long transfer, and for small blocks the timing of millions of them, is not silence.
    status = f"sending for {duration:g} s" + (", then timing each block" if blocks else "")
    try:
        with command_console(stderr=True).status(status):
            record = transfer(
                server,
                port,
                transport=transport.value,
                duration_s=duration,
                family=_family(ipv4, ipv6),
                bind=bind,
                congestion=cc,
                sndbuf_bytes=sndbuf,
                block_bytes=blocks,
            )
    except PerfError as exc:
        _fail(str(exc))
        return
    if json_out:
        sys.stdout.write(json.dumps(record) + "\n")
        return
    used = "MPTCP" if record["mptcp"] else "TCP"
    if transport is TransportChoice.mptcp and not record["mptcp"]:
        used = "TCP (the server or a middlebox refused MPTCP: fell back)"
    table = report_table(f"{record['source']} → {record['destination']} port {port}")
    table.add_column("field")
    table.add_column("value", justify="right")
    table.add_row("transport", used)
    if record["subflows"]:
        table.add_row("subflows (most seen)", str(record["subflows"]))
    table.add_row("congestion control", record["congestion"])
    table.add_row("bytes received", f"{record['bytes_received']:,}")
    table.add_row("receive time s", f"{record['receive_s']:.3f}")
    table.add_row("goodput Mbit/s", _mbps(record["goodput_mbps"]))
    if blocks is not None:
        summary = record["latency_ms"]
        table.add_row("blocks completed", f"{summary['blocks']:,}")
        if summary["blocks"]:
            for key in ("p50", "p90", "p99", "max"):
                table.add_row(f"block latency {key} ms", f"{summary[key]:.3f}")
        uncertainty = record["clock_uncertainty_ns"]
        table.add_row(
            "clock offset",
            "none (one host)" if uncertainty == 0 else f"± {uncertainty / 1e6:.3f} ms",
        )
    command_console().print(table)


def _series_progress(console: Console) -> Progress:
    return Progress(
        TextColumn("[bold]{task.description}"),
        BarColumn(bar_width=None),
        MofNCompleteColumn(),
        TextColumn("[red]{task.fields[failed]} failed"),
        TextColumn("ETA"),
        TimeRemainingColumn(),
        console=console,
    )


@perf_app.command("gain")
def gain_command(
    destinations: Annotated[
        list[str] | None,
        typer.Argument(help="Perf servers: one address per destination endpoint."),
    ] = None,
    source: Annotated[
        list[str] | None,
        typer.Option(
            "--source", "-s", help="A local address TCP is bound to (one path); repeatable."
        ),
    ] = None,
    runs: Annotated[int, typer.Option("--runs", "-n", min=1, help="Runs per transfer.")] = 20,
    duration: DurationOption = 30.0,
    port: PortOption = 5301,
    ipv4: Ipv4Flag = False,
    ipv6: Ipv6Flag = False,
    cc: CcOption = None,
    sndbuf: SndbufOption = 16 * 1024 * 1024,
    out: Annotated[
        Path,
        typer.Option(
            "--out", "-o", help="JSON-lines file the records are added to.", parser=path_value
        ),
    ] = Path("perf-records.jsonl"),
    mesh: Annotated[
        Path | None,
        typer.Option(
            "--mesh",
            help="A mesh file: sources and destinations from its hosts' addresses.",
            parser=path_value,
        ),
    ] = None,
    host: Annotated[
        str | None,
        typer.Option("--host", help="This host's name in --mesh (else: found by its addresses)."),
    ] = None,
) -> None:
    """TCP from each --source and unbound MPTCP to each destination, --runs times in turn.

    With --mesh, the sources are this host's addresses and the destinations every address of
    the other hosts, so that each host of a NorNet-style measurement runs the same command.

    Defaults as the NorNet Core study: 30 s transfers, a 16 MiB send buffer, 20 runs (start
    the servers with --rcvbuf 16777216 for its receive buffer). Records already in --out
    count, so a killed series resumes. Ends with this host's rows of the gain matrix."""
    from mptcplab.backends.perf import gain
    from mptcplab.backends.perf.sockets import PerfError, resolve
    from mptcplab.outputs import writing

    family = _family(ipv4, ipv6)
    label = None
    if mesh is not None:
        from mptcplab.backends.perf.mesh import load_mesh, this_host
        from mptcplab.backends.perf.sockets import version_of

        if destinations or source:
            raise UserError("give destinations and --source, or --mesh, not both")
        layout = load_mesh(mesh)
        me = this_host(layout, host)
        destinations, source, label = layout.destinations_from(me), me.addresses, me.name
        if family is not None:
            # -4/-6 takes the mesh's addresses of that family (a host name may have either).
            destinations = [a for a in destinations if _of_family(a, family)]
            source = [a for a in source if _of_family(a, family)]
            if not destinations:
                version = version_of(family)
                raise UserError(f"--mesh {mesh}: no IPv{version} address of another host")
    elif host is not None:
        raise UserError("--host names this host in a --mesh file; give --mesh too")
    if not destinations:
        raise UserError("give the destinations (perf servers), or a --mesh file")
    # What would fail every transfer alike is refused before the first one.
    for address in source or []:
        where = "--source" if mesh is None else f"--mesh {mesh}: host {label}"
        _check_local(address, where)
        _check_family(address, family, where)
    for destination in destinations:
        try:
            resolve(destination, port, family)
        except PerfError as exc:
            raise UserError(f"destination {exc}") from None
    _check_cc(cc)
    records = gain.read_records(out, appending=True)
    gain.check_resumable(
        records,
        gain.requested(duration_s=duration, family=family, congestion=cc, sndbuf_bytes=sndbuf),
        out,
    )
    todo = gain.remaining(gain.plan(destinations, source or [], runs), records)
    console = command_console()
    if not todo:
        console.print(f"{out}: every transfer is already recorded", highlight=False)
    else:
        with writing(out, "the perf records"), out.open("a"):
            pass
        total_s = len(todo) * duration
        console.print(
            f"{len(todo)} transfers of {duration:g} s (≥ {total_s / 60:.0f} min) → {out}",
            highlight=False,
        )
        failed = 0
        with _series_progress(command_console(stderr=True)) as progress:
            task = progress.add_task("transfers", total=len(todo), failed=0)
            try:
                for record in gain.run_series(
                    todo,
                    out,
                    port=port,
                    duration_s=duration,
                    family=family,
                    congestion=cc,
                    sndbuf_bytes=sndbuf,
                    host=label,
                ):
                    records.append(record)
                    if "error" in record:
                        failed += 1
                        error = escape(record["error"])
                        progress.console.print(f"[red]{error}[/red]", highlight=False)
                    progress.update(task, advance=1, failed=failed)
            except KeyboardInterrupt:
                report_interrupted(f"interrupted; {out} keeps what finished")
                sys.exit(130)
    print_matrix(records, console)
    if todo and failed == len(todo):
        _fail(f"every transfer of this series failed ({failed}); see the errors above")


def print_matrix(records: list[dict[str, Any]], console: Console) -> pd.DataFrame:
    from mptcplab.backends.perf.matrix import gain_matrix

    matrix = gain_matrix(records)
    for family, rows in matrix.groupby("family", sort=True):
        table = report_table(f"{family}: MPTCP/TCP gain per relation (means of the runs)")
        for name in ("source", "destination", "TCP Mbit/s", "MPTCP Mbit/s", "runs T/M"):
            table.add_column(name, justify="left" if name in ("source", "destination") else "right")
        table.add_column("ln gain", justify="right")
        table.add_column("critical")
        for row in rows.itertuples():
            notes = []
            if row.mptcp_fallbacks:
                notes.append(f"{row.mptcp_fallbacks} fallbacks")
            if row.failed:
                notes.append(f"{row.failed} failed")
            table.add_row(
                row.source,
                row.destination,
                _mbps(row.tcp_mbps),
                _mbps(row.mptcp_mbps),
                f"{row.tcp_runs}/{row.mptcp_runs}" + (f" ({', '.join(notes)})" if notes else ""),
                _gain_text(row.log_gain),
                # Non-critical rows hold NaN once the column mixes classes and gaps.
                f"[red]{row.critical}[/red]" if isinstance(row.critical, str) else "",
            )
        console.print(table)
    critical = int(matrix["critical"].notna().sum())
    console.print(
        f"{critical} of {len(matrix)} relations critical (MPTCP < 97.5 % of TCP)",
        highlight=False,
    )
    return matrix


@perf_app.command("matrix")
def matrix_command(
    files: Annotated[
        list[Path],
        typer.Argument(
            metavar="FILE", help="JSON-lines records of perf gain, any hosts.", parser=path_value
        ),
    ],
    png: Annotated[
        Path | None,
        typer.Option("--png", help="Also draw the matrix as a heat map.", parser=path_value),
    ] = None,
    csv: Annotated[
        Path | None, typer.Option("--csv", help="Also write the matrix as CSV.", parser=path_value)
    ] = None,
) -> None:
    """The source × destination matrix of ln(MPTCP/TCP) from the records of several hosts."""
    from mptcplab.outputs import check_writable, writing

    # Refused before the records are read and the matrix printed, as the other commands do.
    for out, what in ((csv, "the matrix CSV"), (png, "the heat map")):
        if out is not None:
            check_writable(out, what, reads=files)
    from mptcplab.backends.perf.gain import read_records

    records = []
    seen: dict[Path, Path] = {}
    for f in files:
        if not f.exists():
            raise UserError("no such file", file=str(f))
        # Twice the same file would count each of its transfers twice.
        if (same := seen.setdefault(f.resolve(), f)) is not f:
            also = "" if str(same) == str(f) else f" (also as {same})"
            raise UserError(f"given twice{also}", file=str(f))
        records += read_records(f)
    if not records:
        raise UserError("no perf records in " + ", ".join(map(str, files)))
    from mptcplab.backends.perf.gain import settings_in

    if len(settings := settings_in(records)) > 1:
        typer.secho(
            "warning: the records were made with different settings, and the matrix's means "
            "mix them: " + "; ".join(settings),
            fg=typer.colors.YELLOW,
            err=True,
        )
    matrix = print_matrix(records, command_console())
    import numpy as np  # here: every command line pays for what cli imports

    if png is not None and not np.isfinite(matrix["log_gain"].to_numpy(dtype=float)).any():
        raise UserError(
            "no relation has a gain to draw (none has both a TCP and an MPTCP transfer "
            "that finished)",
            field="--png",
        )
    if csv is not None:
        with writing(csv, "the matrix CSV"):
            matrix.to_csv(csv, index=False)
    if png is not None:
        from mptcplab.analysis.metrics import metric_info
        from mptcplab.analysis.plots import heat_map
        from mptcplab.backends.perf.matrix import heat_grid

        info = metric_info("log_gain")
        image = heat_map(heat_grid(matrix), info.unit, info.higher_is_better)
        with writing(png, "the heat map"):
            png.write_bytes(image)


def register(app: typer.Typer) -> None:
    app.add_typer(perf_app, name="perf")

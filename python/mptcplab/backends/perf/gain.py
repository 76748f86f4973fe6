"""The runs of one host towards its destinations, as the NorNet Core study made them (spec
§5.3): per destination, TCP bound to each source address (one path each) and MPTCP bound to
none (the kernel may use every path), taken in turn run after run so that a change in the
network over the campaign touches both alike.

Every finished transfer is appended at once to a JSON-lines file, so a killed series resumes
where it stopped: a transfer already recorded (same destination, source and transport, up to
``runs`` of them) is not made again. A transfer that fails is recorded with its error and
counts as made: a rerun does not hide a path that keeps failing. Each record keeps the settings
its series asked for (``requested``); a series resumes only a file of its own settings, so that
the matrix never averages transfers of two congestion controls or durations.
"""

from __future__ import annotations

import ipaddress
import json
import math
import socket
from collections import Counter
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from mptcplab.backends.perf import client, sockets
from mptcplab.backends.perf.sockets import PerfError, Transport
from mptcplab.errors import UserError
from mptcplab.outputs import make_folder, writing


@dataclass(frozen=True)
class Transfer:
    """One transfer to make: ``bind`` None is the unbound MPTCP socket."""

    destination: str
    transport: Transport
    bind: str | None

    @property
    def key(self) -> tuple[str, str, str]:
        return (self.destination, self.transport, self.bind or "*")


def plan(destinations: Sequence[str], sources: Sequence[str], runs: int) -> list[Transfer]:
    """``runs`` rounds; in each, per destination, TCP from every source of its address family
    then MPTCP. With no source, one TCP transfer where the routing table sends it."""
    binds: Sequence[str | None] = list(sources) or [None]
    one_round = [
        t
        for d in destinations
        for t in [Transfer(d, "tcp", b) for b in binds if _same_family(b, d)]
        + [Transfer(d, "mptcp", None)]
    ]
    return one_round * runs


def _canonical(address: str) -> str:
    """An IP address in its canonical form (``2001:DB8:0::1`` → ``2001:db8::1``); a host name
    as it is."""
    try:
        return str(ipaddress.ip_address(address))
    except ValueError:
        return address


def _same_family(source: str | None, destination: str) -> bool:
    if source is None:
        return True
    a, b = sockets.ip_version(source), sockets.ip_version(destination)
    return a is None or b is None or a == b


def read_records(path: Path, *, appending: bool = False) -> list[dict[str, Any]]:
    """The records of a JSON-lines file (none when it does not exist yet); a last line cut
    short (no line end) is ignored, unless ``appending``: records added after it would
    continue that line and spoil both."""
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        return []
    except IsADirectoryError:
        message = "is a folder, expected a JSON-lines file of perf records"
        raise UserError(message, file=str(path)) from None
    except OSError as exc:
        raise UserError(f"cannot read the perf records: {exc.strerror}", file=str(path)) from None
    try:
        text = data.decode()
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        raise UserError("not a JSON record (not UTF-8 text)", file=str(path), line=line) from None
    records = []
    lines = text.split("\n")
    for number, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            record = json.loads(line)
        except json.JSONDecodeError:
            # Only the last piece can lack its line end: split leaves "" after a final one.
            if number == len(lines) and not appending:
                break
            cut = " (cut short: remove it to add records)" if number == len(lines) else ""
            raise UserError(f"not a JSON record{cut}", file=str(path), line=number) from None
        if not isinstance(record, dict) or "transport" not in record:
            raise UserError("not a mptcplab perf record", file=str(path), line=number)
        problem = _record_problem(record)
        if problem is not None:
            raise UserError(f"not a mptcplab perf record: {problem}", file=str(path), line=number)
        records.append(record)
    return records


_TEXT_FIELDS = ("host", "bind", "source", "server", "destination", "error")


def _record_problem(record: dict[str, Any]) -> str | None:
    """What in a record the matrix could not read, or None."""
    if record["transport"] not in ("tcp", "mptcp"):
        return f'transport: expected "tcp" or "mptcp", got {json.dumps(record["transport"])}'
    family = record.get("family", 4)
    if family not in (4, 6) or isinstance(family, bool):
        return f"family: expected 4 or 6, got {json.dumps(family)}"
    for name in _TEXT_FIELDS:
        if name in record and not isinstance(record[name], str):
            return f"{name}: expected text, got {json.dumps(record[name])}"
    if "mptcp" in record and not isinstance(record["mptcp"], bool):
        return f"mptcp: expected true or false, got {json.dumps(record['mptcp'])}"
    if "goodput_mbps" in record:
        goodput = record["goodput_mbps"]
        number = isinstance(goodput, int | float) and not isinstance(goodput, bool)
        if not number or not math.isfinite(goodput) or goodput < 0:
            return f"goodput_mbps: expected a finite number >= 0, got {json.dumps(goodput)}"
    return None


def _record_key(record: dict[str, Any]) -> tuple[str, str, str]:
    return (record.get("server", ""), record["transport"], record.get("bind", "*"))


def remaining(todo: Sequence[Transfer], done: Sequence[dict[str, Any]]) -> list[Transfer]:
    """``todo`` less what ``done`` already holds, counted per transfer key."""
    left = Counter(_record_key(r) for r in done)
    out = []
    for t in todo:
        if left[t.key] > 0:
            left[t.key] -= 1
        else:
            out.append(t)
    return out


#: A setting of ``requested`` and the option of ``mptcplab perf gain`` that sets it.
SETTING_OPTIONS = {
    "duration_s": "--duration",
    "family": "-4/-6",
    "congestion": "--cc",
    "sndbuf_bytes": "--sndbuf",
}


def requested(
    *,
    duration_s: float,
    family: socket.AddressFamily | None,
    congestion: str | None,
    sndbuf_bytes: int | None,
) -> dict[str, Any]:
    """The settings a series asks of its transfers, as its records keep them (None: the
    host's default)."""
    return {
        "duration_s": duration_s,
        "family": None if family is None else sockets.version_of(family),
        "congestion": congestion,
        "sndbuf_bytes": sndbuf_bytes,
    }


def check_resumable(records: Sequence[dict[str, Any]], wanted: dict[str, Any], path: Path) -> None:
    """Refuse to add transfers of settings ``wanted`` to records made with others: the
    matrix's means would mix them, and the transfers recorded would count as made."""
    for record in records:
        theirs = record.get("requested")
        if theirs == wanted:
            continue
        if not isinstance(theirs, dict):
            why = "a record without the settings it was made with"
        else:
            why = "transfers made with " + ", ".join(
                f"{option} {_setting_text(theirs.get(key))} (asked now: "
                f"{_setting_text(wanted[key])})"
                for key, option in SETTING_OPTIONS.items()
                if theirs.get(key) != wanted[key]
            )
        raise UserError(
            f"holds {why}; a series resumes only with the settings it began with: give "
            "those, or another --out",
            file=str(path),
        )


def settings_in(records: Sequence[dict[str, Any]]) -> list[str]:
    """The distinct settings the records were made with, each in words (a record of an
    older mptcplab that kept none: "not recorded")."""
    found: dict[str, None] = {}
    for record in records:
        theirs = record.get("requested")
        if not isinstance(theirs, dict):
            found.setdefault("not recorded")
            continue
        found.setdefault(
            ", ".join(
                f"{option} {_setting_text(theirs.get(key))}"
                for key, option in SETTING_OPTIONS.items()
            )
        )
    return list(found)


def _setting_text(value: Any) -> str:
    return "default" if value is None else f"{value:g}" if isinstance(value, float) else str(value)


def run_series(
    todo: Sequence[Transfer],
    out: Path,
    *,
    port: int,
    duration_s: float,
    family: socket.AddressFamily | None = None,
    congestion: str | None = None,
    sndbuf_bytes: int | None = None,
    host: str | None = None,
) -> Iterator[dict[str, Any]]:
    """Make each transfer of ``todo`` in order, appending its record to ``out``; ``host``
    names this host in the records (default: its host name)."""
    make_folder(out, "the perf records")
    settings = requested(
        duration_s=duration_s, family=family, congestion=congestion, sndbuf_bytes=sndbuf_bytes
    )
    for t in todo:
        try:
            record = client.transfer(
                t.destination,
                port,
                transport=t.transport,
                duration_s=duration_s,
                family=family,
                bind=t.bind,
                congestion=congestion,
                sndbuf_bytes=sndbuf_bytes,
            )
        except PerfError as exc:
            # Addresses as a transfer that got through records them (the socket's own form),
            # so that its failures count against the same relation of the matrix.
            record = {
                "host": socket.gethostname(),
                "transport": t.transport,
                "bind": t.bind or "*",
                "source": _canonical(t.bind) if t.bind else "*",
                "server": t.destination,
                "destination": _canonical(t.destination),
                "family": _family_number(family, t),
                "error": str(exc),
            }
        record["requested"] = settings
        if host is not None:
            record["host"] = host
        with writing(out, "the perf records"), out.open("a") as f:
            f.write(json.dumps(record) + "\n")
        yield record


def _family_number(family: socket.AddressFamily | None, t: Transfer) -> int:
    return sockets.version_of(family or sockets.family_of(t.bind or t.destination))

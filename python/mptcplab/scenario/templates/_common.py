"""Building blocks shared by the scenario templates: parameter checks that speak the template's
language (UserError naming the parameter), queue profiles and buffer settings."""

from __future__ import annotations

import math
import numbers
from collections.abc import Callable, Sequence
from typing import Any

from pydantic import ValidationError

from mptcplab.errors import UserError
from mptcplab.scenario.model import (
    HEADER_BYTES,
    MAX_FLOWS,
    MSS_BYTES,
    BlocksApp,
    BulkApp,
    DropTailQueue,
    RedQueue,
    Scenario,
    SizeApp,
    issues,
)

AppArg = str | dict[str, Any] | BulkApp | BlocksApp | SizeApp

#: Rate of links that stand for high-speed accesses which are never the bottleneck, Mbit/s.
FAST_ACCESS_MBPS = 1000.0

#: Largest count of packets or bytes the scenario takes (an unsigned 64-bit integer).
U64_MAX = 2**64 - 1

#: Why a delay has a ceiling, for messages about the parameter it derives from.
CLOCK_LIMIT = " (the clock counts nanoseconds in 64 bits)"


def _is_bool(value: Any) -> bool:
    # numpy booleans are not ``bool`` but say so through their dtype.
    dtype = getattr(value, "dtype", None)
    return isinstance(value, bool) or (dtype is not None and dtype.kind == "b")


def _is_real(value: Any) -> bool:
    """A real number, whatever its type (int, float, numpy scalars from a design), not a bool."""
    return isinstance(value, numbers.Real) and not _is_bool(value)


def number(
    name: str,
    value: Any,
    *,
    minimum: float | None = None,
    positive: bool = False,
    maximum: float | None = None,
    below: float | None = None,
    why: str = "",
) -> float:
    """A real number parameter (bools refused: ``True`` is not a capacity). ``maximum`` and
    ``below`` bound it from above (inclusive, exclusive); ``why`` explains the bound."""
    if not _is_real(value) or not math.isfinite(value):
        raise UserError(f"expected a finite number, got {value!r}", field=name)
    if minimum is not None and value < minimum:
        raise UserError(f"expected a number ≥ {minimum:g}, got {value!r}", field=name)
    if positive and value <= 0:
        raise UserError(f"expected a number > 0, got {value!r}", field=name)
    if maximum is not None and value > maximum:
        raise UserError(f"expected a number ≤ {maximum:g}{why}, got {value!r}", field=name)
    if below is not None and value >= below:
        raise UserError(f"expected a number < {below:g}{why}, got {value!r}", field=name)
    return float(value)


def integer(
    name: str, value: Any, *, minimum: int | None = None, maximum: int | None = None
) -> int:
    """An integer parameter (``4.0`` is accepted as 4, ``4.5`` is not)."""
    if _is_real(value) and not isinstance(value, numbers.Integral) and float(value).is_integer():
        value = int(value)
    if _is_bool(value) or not isinstance(value, numbers.Integral):
        raise UserError(f"expected an integer, got {value!r}", field=name)
    value = int(value)
    if minimum is not None and value < minimum:
        raise UserError(f"expected an integer ≥ {minimum}, got {value!r}", field=name)
    if maximum is not None and value > maximum:
        raise UserError(f"expected an integer ≤ {maximum}, got {value!r}", field=name)
    return value


def buffer_bytes(name: str, value: Any) -> int:
    """A socket buffer size in bytes: at least one segment, as the scenario takes it."""
    size = integer(name, value, maximum=U64_MAX)
    if size < MSS_BYTES:
        raise UserError(
            f"expected at least one segment ({MSS_BYTES} bytes), got {size}", field=name
        )
    return size


def users(counts: dict[str, int]) -> None:
    """The users of every flow entry, ``counts`` by parameter, fit in one run (the simulator's
    MAX_FLOWS); the last parameter is named, with the sum."""
    total = sum(counts.values())
    if total > MAX_FLOWS:
        terms = " + ".join(counts)
        raise UserError(
            f"expected at most {MAX_FLOWS} users in all, got {terms} = {total}",
            field=list(counts)[-1],
        )


def boolean(name: str, value: Any) -> bool:
    if not _is_bool(value):
        raise UserError(f"expected true or false, got {value!r}", field=name)
    return bool(value)


def choice(name: str, value: Any, options: Sequence[str]) -> str:
    if value not in options:
        listed = ", ".join(repr(o) for o in options)
        raise UserError(f"expected one of {listed}, got {value!r}", field=name)
    return str(value)


def per_path(
    name: str,
    value: Any,
    n: int,
    *,
    minimum: float | None = None,
    positive: bool = False,
    maximum: float | None = None,
    below: float | None = None,
    why: str = "",
) -> tuple[float, ...]:
    """One number per path: a sequence of ``n`` numbers, or one number used for every path."""
    bounds: dict[str, Any] = {
        "minimum": minimum,
        "positive": positive,
        "maximum": maximum,
        "below": below,
        "why": why,
    }
    if _is_real(value):
        return (number(name, value, **bounds),) * n
    # Any sized iterable (list, tuple, numpy array), not a string.
    if isinstance(value, str | bytes | dict) or not hasattr(value, "__len__") or len(value) != n:
        raise UserError(
            f"expected {n} numbers (one per path) or one number, got {value!r}", field=name
        )
    return tuple(number(f"{name}[{k}]", v, **bounds) for k, v in enumerate(list(value)))


def application(name: str, value: AppArg) -> BulkApp | BlocksApp | SizeApp:
    """``"bulk"``, ``"blocks"`` (8 KiB blocks), a table such as ``{kind = "size", bytes = ...}``,
    or an application model."""
    if isinstance(value, BulkApp | BlocksApp | SizeApp):
        return value
    if value == "bulk":
        return BulkApp()
    if value == "blocks":
        return BlocksApp()
    if isinstance(value, dict):
        apps = {"bulk": BulkApp, "blocks": BlocksApp, "size": SizeApp}
        kind = value.get("kind")
        if kind not in apps:
            raise UserError(
                f"expected kind = one of 'bulk', 'blocks', 'size', got {kind!r}",
                field=f"{name}.kind",
            )
        try:
            return apps[kind].model_validate(value)
        except ValidationError as exc:
            first = issues(exc, apps[kind])[0]
            raise UserError(first.message, field=f"{name}.{first.field}".rstrip(".")) from None
    raise UserError(f"expected 'bulk', 'blocks' or a table with kind, got {value!r}", field=name)


def receive_buffer(name: str, value: Any) -> dict[str, Any]:
    """Flow fields for ``rcvbuf``: ``"auto"`` (auto-tuning capped at the default 4 MiB) or a fixed
    size in bytes."""
    if value == "auto":
        return {"rcvbuf": "auto"}
    if _is_real(value):
        return {"rcvbuf_bytes": buffer_bytes(name, value)}
    raise UserError(f'expected "auto" or a size in bytes, got {value!r}', field=name)


def droptail_queuing_delay(
    capacity_mbps: float, queuing_delay_ms: float, *, field: str = "queuing_delay_ms"
) -> DropTailQueue:
    """A drop-tail buffer whose full waiting room adds ``queuing_delay_ms`` of queuing delay to a
    full-size packet: the packet being sent (the simulator's and linkem's buffers count it) plus
    the whole number of full-size packets nearest to ``queuing_delay_ms`` of the link rate.

    A buffer of ``queuing_delay_ms`` of the link rate that counts the packet being sent adds one
    packet's transmission time less than that, and nothing when it holds less than two packets:
    at 0.5 Mbit/s (24 ms per full packet) a 96 ms buffer makes a packet wait 72 ms at most, and
    any buffer under 48 ms leaves no waiting room at all, so that a TCP flow loses about every
    other packet of its bursts. The CoNEXT 2013 factor is the delay the buffer adds (spec
    §4.6), and a testbed sets it as a queue limit in whole packets (a Linux qdisc's limit does
    not count the packet being sent).
    """
    waiting_bytes = capacity_mbps * 1e6 / 8.0 * queuing_delay_ms / 1e3
    waiting_packets = waiting_bytes / (MSS_BYTES + HEADER_BYTES)
    if not waiting_packets < 2.0**63:  # also an infinite product of two finite factors
        raise UserError(
            f"{queuing_delay_ms:g} ms of queuing at {capacity_mbps:g} Mbit/s is a buffer of "
            "more than 2^63 packets; expected a delay the link can queue",
            field=field,
        )
    return DropTailQueue(packets=1 + round(waiting_packets))


def droptail_ms(queuing_delay_ms: float) -> DropTailQueue:
    """A drop-tail buffer of ``queuing_delay_ms`` of the link rate in bytes, the packet being sent
    included (the NSDI 2012 setup gives its buffers so: 80 ms of 8 Mbit/s, 2 s of 2 Mbit/s)."""
    return DropTailQueue(ms=queuing_delay_ms)


def red_profile(capacity_mbps: float, *, instantaneous: bool = False) -> RedQueue:
    """The RED profile of draft-khalili-mptcp-performance-issues-06 (spec §5.4).

    For a 10 Mbit/s link: no drop below an average of 25 packets, probability rising to 0.1 at
    50 packets, then (gentle) to 1 at 100 packets; thresholds scale with k = C / 10 Mbit/s.
    The draft leaves these open; our choices: EWMA weight 0.002 (Floyd–Jacobson), thresholds in
    packets of one full segment (1500 B on the wire), and a physical buffer of 4·max_th = 200·k
    packets — at least the 100·k the draft's testbed needs, and twice that so the instantaneous
    queue can absorb bursts while the EWMA average catches up, leaving drops to RED.
    """
    # Checked here: the queue model would refuse the thresholds derived from it, in a message
    # about fields the caller never gave.
    k = number("capacity_mbps", capacity_mbps, positive=True) / 10.0
    if not 200.0 * k <= U64_MAX:
        raise UserError(
            f"expected at most {U64_MAX / 20.0:g} Mbit/s (the RED buffer of 200 packets per 10 "
            f"Mbit/s counts packets in 64 bits), got {capacity_mbps!r}",
            field="capacity_mbps",
        )
    return RedQueue(
        min_packets=25.0 * k,
        max_packets=50.0 * k,
        max_p=0.1,
        weight=0.002,
        limit_packets=max(1, math.ceil(200.0 * k)),
        gentle=True,
        instantaneous=instantaneous,
    )


def build(data: dict[str, Any]) -> Scenario:
    """Validate a scenario a template assembled; a problem is reported as a UserError (it means a
    parameter value the scenario cannot take, such as a zero capacity)."""
    try:
        return Scenario.model_validate(data)
    except ValidationError as exc:
        first = issues(exc)[0]
        raise UserError(first.message, field=first.field or None) from None


Template = Callable[..., Scenario]

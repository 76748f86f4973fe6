"""Checks of the notebook API's arguments, shared by its modules: bad input is refused by a
ValueError naming the argument and what was expected, before pandas, numpy or the solver fail
on it with a message about their own internals.

No pandas or numpy at import: run workers import the metrics, and with them this module.
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Iterable, Mapping, Sequence
from typing import Any, TypeVar

T = TypeVar("T")


def listed(value: Iterable[T], argument: str, of: str) -> list[T]:
    """``value``'s items; a string is refused: taken as a list it would be its characters."""
    if isinstance(value, str | bytes):
        raise ValueError(f"{argument}: expected a list of {of}, got the string {value!r}")
    try:
        return list(value)
    except TypeError:
        raise ValueError(f"{argument}: expected a list of {of}, got {value!r}") from None


def is_number(value: Any) -> bool:
    """A real number (numpy's included), bools excepted: ``True`` is no capacity."""
    return isinstance(value, numbers.Real) and not isinstance(value, bool)


def confidence_level(confidence: Any) -> float:
    """``confidence`` checked: a coverage such as 0.95, not a percentage."""
    if not is_number(confidence) or not 0 < confidence < 1:
        raise ValueError(f"confidence: expected a number in (0, 1), got {confidence!r}")
    return float(confidence)


def as_mapping(value: Any, argument: str, what: str) -> Mapping[str, Any]:
    """A pydantic model (a Scenario, a Report) as the dictionary the analysis reads; a
    dictionary as it is."""
    if isinstance(value, Mapping):
        return value
    to_dict = getattr(value, "to_dict", None)
    if not callable(to_dict):
        raise ValueError(f"{argument}: expected a {what} or its dictionary, got {value!r}")
    data: Mapping[str, Any] = to_dict()
    return data


def link_capacities(scenario: Mapping[str, Any]) -> dict[str, float]:
    """Each link's capacity (Mbit/s) by id, every one a finite number > 0, as the scenario model
    requires of a scenario given as a dictionary too."""
    capacity: dict[str, float] = {}
    for i, link in enumerate(scenario["links"]):
        value = link["capacity_mbps"]
        if not is_number(value) or not 0 < value < math.inf:
            raise ValueError(
                f"scenario: links[{i}].capacity_mbps: expected a finite capacity > 0 (Mbit/s), "
                f"got {value!r}"
            )
        capacity[link["id"]] = float(value)
    return capacity


def check_hops(scenario: Mapping[str, Any], links: Iterable[str]) -> None:
    """Every hop of every flow's paths must be one of ``links``."""
    known = set(links)
    for i, flow in enumerate(scenario["flows"]):
        for j, path in enumerate(flow["paths"]):
            for hop in path:
                if hop not in known:
                    raise ValueError(
                        f"scenario: flows[{i}].paths[{j}]: unknown link {hop!r}; the scenario's "
                        f"links: {', '.join(sorted(known)) or 'none'}"
                    )


def unknown_names(names: Sequence[str], known: Iterable[str], argument: str, what: str) -> None:
    """Refuse the first of ``names`` not in ``known``, listing those that are."""
    available = list(dict.fromkeys(known))
    for name in names:
        if name not in available:
            raise ValueError(
                f"{argument}: unknown {what} {name!r}; expected one of: "
                f"{', '.join(map(str, available)) or 'none'}"
            )


def require_columns(
    columns: Iterable[Any], names: Sequence[str], argument: str, table: str
) -> None:
    """Refuse the first of ``names`` that is not one of a table's ``columns``."""
    have = list(columns)
    for name in names:
        if name not in have:
            raise ValueError(
                f"{argument}: {name!r} is not a column of {table}; its columns: "
                f"{', '.join(map(str, have)) or 'none'}"
            )


def finite_numbers(
    column: Any, argument: str, *, unfinished: bool = False, stalled: bool = False
) -> None:
    """Refuse a table column (a pandas Series) of other things than numbers, or with infinite
    values: percentiles and medians over them are NaN or meaningless. NaN is a missing value.
    With ``unfinished``, +inf is a time that ran past its run, and with ``stalled`` −inf is a
    log gain where MPTCP delivered nothing (``analysis.unfinished``)."""
    from pandas.api.types import is_bool_dtype, is_numeric_dtype

    name = column.name
    if column.notna().any() and (not is_numeric_dtype(column) or is_bool_dtype(column)):
        raise ValueError(f"{argument}: column {name!r} holds {column.dtype} values, not numbers")
    refused = [v for v, kept in ((math.inf, unfinished), (-math.inf, stalled)) if not kept]
    infinite = int(column.isin(refused).sum())
    if infinite:
        allowed = ["+inf (unfinished)"] * unfinished + ["−inf (stalled)"] * stalled
        raise ValueError(
            f"{argument}: column {name!r} has {_count(infinite, 'infinite value')}; expected "
            + " or ".join(["finite numbers", *allowed])
        )


def _count(n: int, what: str) -> str:
    return f"{n} {what}" + ("" if n == 1 else "s")


def known_metric(name: str, columns: Iterable[Any], argument: str) -> None:
    """Refuse a metric that is neither a column of the runs nor a metric mptcplab knows: a
    misspelt name would otherwise give a column of blanks."""
    from mptcplab.analysis.metrics import is_metric_name  # it imports this module

    have = list(columns)
    if name in have or is_metric_name(name):
        return
    given = [c for c in have if isinstance(c, str) and is_metric_name(c)]
    raise ValueError(
        f"{argument}: unknown metric {name!r}; the runs have "
        + (", ".join(given) if given else "no metric")
    )

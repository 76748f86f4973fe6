"""The most goodput a scenario's flows can get together: the theoretical upper bound of the
CoNEXT 2013 congestion-balancing study (Paasch, Khalili, Bonaventure, "On the Benefits of
Applying Experimental Design to Improve Multipath TCP", spec §4.6), whose metric is the
aggregate goodput over it.

A linear program over the rate of every (flow, path): maximise their sum within the links'
capacities, whatever it leaves to each user (no fairness). In the study's ring of three
bottlenecks every session can fill its one-hop bottleneck, so the bound is the sum of the
capacities and every packet a two-hop subflow sends costs two bottlenecks for one delivery.
Users of one flow entry pool their rates, so ``count`` does not change the bound.

Like the fair shares (:mod:`mptcplab.analysis.fairshare`) it leaves out RTT, buffers, random
loss and the ACK direction; rates are goodput, the payload share 1448/1500 of the wire rate.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

import numpy as np

from mptcplab.analysis._checks import as_mapping, check_hops, link_capacities
from mptcplab.analysis.metrics import PAYLOAD_FRACTION

if TYPE_CHECKING:
    from mptcplab.scenario.model import Scenario

__all__ = ["max_total_goodput"]


def max_total_goodput(scenario: Scenario | Mapping[str, Any]) -> float:
    """The largest sum of goodputs (Mbit/s) the flows of ``scenario`` (a Scenario or its
    dictionary) can reach together within the links' capacities."""
    data = as_mapping(scenario, "scenario", "Scenario")
    links = link_capacities(data)
    check_hops(data, links)
    capacity = tuple(links.items())
    paths = tuple(tuple(path) for flow in data["flows"] for path in flow["paths"])
    return _max_total(capacity, paths) * PAYLOAD_FRACTION


@functools.lru_cache(maxsize=32)
def _max_total(
    capacity: tuple[tuple[str, float], ...], paths: tuple[tuple[str, ...], ...]
) -> float:
    caps = dict(capacity)
    hops = [set(path) for path in paths]
    # Paths that share no link fill their narrowest one each: no program needed (a campaign's
    # runs are mostly one connection over disjoint paths).
    if all(a.isdisjoint(b) for i, a in enumerate(hops) for b in hops[i + 1 :]):
        return sum(min(caps[hop] for hop in path) for path in paths)
    # Imported here: most runs need no program.
    from scipy.optimize import linprog

    used = sorted(set().union(*hops))
    scale = max(caps[link] for link in used)
    rows = np.array([[1.0 if link in h else 0.0 for h in hops] for link in used])
    result = linprog(
        -np.ones(len(paths)),
        A_ub=rows,
        b_ub=np.array([caps[link] / scale for link in used]),
        bounds=[(0.0, None)] * len(paths),
        method="highs",
    )
    if result.status != 0:
        raise RuntimeError(f"capacity bound: the linear program failed: {result.message}")
    return float(-result.fun) * scale

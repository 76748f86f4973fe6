"""The max-min fair share of every flow of a scenario, multipath users pooling their paths.

The theoretical baseline of the MPTCP fairness studies: each user's rate is the sum of what it
sends on its paths, a TCP user has one path, and the allocation is max-min fair over users'
rates with the links' capacities as the only constraints. It gives the "optimal without probing
cost" column of draft-khalili-mptcp-performance-issues-06 for its Scenarios A and C (spec §5.4):
every user gets C = 1 Mbit/s, which LIA does not give the single-path users. (The draft's
"with probing cost" optimum needs its probing model, which the spec does not give: not here.)

Computed by progressive filling (Bertsekas, Gallager, "Data Networks", 2nd ed., §6.5.2),
generalised to users with several paths: a linear program raises the smallest rate of the users
not yet fixed as far as the links allow; the users that cannot then go beyond that level are
fixed at it, and the rest are raised again. The ``count`` identical flows of a flow spec share
one set of variables (the max-min fair rates are unique, and identical users get equal ones).

What it leaves out: RTT, buffers and random loss (a loss-limited TCP flow does not reach its
share), the ACK direction, and time (all flows are taken as active together and greedy).
Rates are goodput, the payload share 1448/1500 of the wire rate (``PAYLOAD_FRACTION``).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from mptcplab.analysis.metrics import PAYLOAD_FRACTION

if TYPE_CHECKING:
    from mptcplab.scenario.model import Scenario

# Relative slack of "cannot go beyond the level": the LP solver's answers carry ~1e-9 of noise.
_TOLERANCE = 1e-7


@dataclass(frozen=True)
class FairShare:
    """Max-min fair goodput per flow spec (each of its ``count`` flows gets this much) and how
    each splits it over its paths (one way to reach it; the split need not be unique)."""

    per_flow_mbps: dict[str, float]
    per_path_mbps: dict[str, list[float]]

    def of(self, flow_id: str) -> float:
        """The share of a report's flow, ``id`` or ``id#k``."""
        return self.per_flow_mbps[flow_id.split("#", 1)[0]]


def fair_share(scenario: Scenario | Mapping[str, Any]) -> FairShare:
    """The max-min fair goodput of every flow of ``scenario`` (a Scenario or its dictionary)."""
    data = scenario if isinstance(scenario, Mapping) else scenario.to_dict()
    capacity = {link["id"]: float(link["capacity_mbps"]) for link in data["links"]}
    flows = list(data["flows"])
    if len(flows) == 1 and int(flows[0].get("count", 1)) == 1:
        alone = _alone_on_disjoint_paths(flows[0], capacity)
        if alone is not None:
            return alone
    # One variable per (flow spec, path): the rate of one of its users on that path.
    owner: list[int] = []
    for g, flow in enumerate(flows):
        owner.extend([g] * len(flow["paths"]))
    n_vars = len(owner)
    used = sorted({hop for flow in flows for path in flow["paths"] for hop in path})
    links = np.zeros((len(used), n_vars))
    row_of = {link: r for r, link in enumerate(used)}
    v = 0
    for flow in flows:
        for path in flow["paths"]:
            for hop in path:
                links[row_of[hop], v] += int(flow.get("count", 1))
            v += 1
    link_caps = np.array([capacity[link] for link in used])
    # rate[g] = sum of g's path variables.
    rate = np.zeros((len(flows), n_vars))
    rate[owner, np.arange(n_vars)] = 1.0

    fixed: dict[int, float] = {}
    active = set(range(len(flows)))
    while active:
        level = _raise_level(links, link_caps, rate, active, fixed)
        stuck = [
            g
            for g in sorted(active)
            if not _can_exceed(links, link_caps, rate, active, fixed, level, g)
        ]
        for g in stuck or sorted(active):
            fixed[g] = level
            active.discard(g)
    split = _split(links, link_caps, rate, fixed)
    per_path: dict[str, list[float]] = {}
    v = 0
    for flow in flows:
        k = len(flow["paths"])
        per_path[flow["id"]] = [float(x) * PAYLOAD_FRACTION for x in split[v : v + k]]
        v += k
    return FairShare(
        per_flow_mbps={flows[g]["id"]: r * PAYLOAD_FRACTION for g, r in sorted(fixed.items())},
        per_path_mbps=per_path,
    )


def _alone_on_disjoint_paths(
    flow: Mapping[str, Any], capacity: dict[str, float]
) -> FairShare | None:
    """One user whose paths share no link fills each path's narrowest link: no program needed
    (the common case of a campaign's runs, whose metrics are computed as each run ends)."""
    hops = [hop for path in flow["paths"] for hop in path]
    if len(hops) != len(set(hops)):
        return None
    paths = [min(capacity[hop] for hop in path) * PAYLOAD_FRACTION for path in flow["paths"]]
    return FairShare({flow["id"]: sum(paths)}, {flow["id"]: paths})


def _floor_rows(
    rate: np.ndarray, active: set[int], fixed: dict[int, float], level: float | None
) -> tuple[list[np.ndarray], list[float]]:
    """``rate[g] >= bound`` as ``-rate[g] <= -bound``: fixed users keep their level (less the
    solver's slack), active ones at least ``level`` when it is given."""
    rows, bounds = [], []
    for g, value in fixed.items():
        rows.append(-rate[g])
        bounds.append(-value * (1 - _TOLERANCE))
    if level is not None:
        for g in active:
            rows.append(-rate[g])
            bounds.append(-level * (1 - _TOLERANCE))
    return rows, bounds


def _solve(objective: np.ndarray, rows: list[np.ndarray], bounds: list[float]) -> np.ndarray:
    # Imported here: a campaign's run workers compute this metric for every run, and most runs
    # (one flow on disjoint paths) need no program.
    from scipy.optimize import linprog

    result = linprog(
        objective, A_ub=np.vstack(rows), b_ub=np.array(bounds), bounds=(0, None), method="highs"
    )
    if result.status != 0:  # pragma: no cover - feasible and bounded by construction
        raise RuntimeError(f"fair share: the linear program failed: {result.message}")
    return np.asarray(result.x)


def _raise_level(
    links: np.ndarray,
    caps: np.ndarray,
    rate: np.ndarray,
    active: set[int],
    fixed: dict[int, float],
) -> float:
    """The highest level every active user can reach together, the fixed ones keeping theirs."""
    n_vars = links.shape[1]
    # Variables: the path rates, then the level t; maximise t.
    rows = [np.append(row, 0.0) for row in links]
    bounds = list(caps)
    floor_rows, floor_bounds = _floor_rows(rate, set(), fixed, None)
    rows += [np.append(row, 0.0) for row in floor_rows]
    bounds += floor_bounds
    for g in active:
        rows.append(np.append(-rate[g], 1.0))  # t - rate[g] <= 0
        bounds.append(0.0)
    objective = np.zeros(n_vars + 1)
    objective[-1] = -1.0
    return float(_solve(objective, rows, bounds)[-1])


def _can_exceed(
    links: np.ndarray,
    caps: np.ndarray,
    rate: np.ndarray,
    active: set[int],
    fixed: dict[int, float],
    level: float,
    g: int,
) -> bool:
    """Whether user ``g`` can go beyond ``level`` while every other keeps what it has."""
    floor_rows, floor_bounds = _floor_rows(rate, active, fixed, level)
    x = _solve(-rate[g], [*links, *floor_rows], [*caps, *floor_bounds])
    return float(rate[g] @ x) > level * (1 + _TOLERANCE) + 1e-9


def _split(
    links: np.ndarray, caps: np.ndarray, rate: np.ndarray, fixed: dict[int, float]
) -> np.ndarray:
    """Path rates that give every user its fair share."""
    floor_rows, floor_bounds = _floor_rows(rate, set(), fixed, None)
    # Among the splits, the one that puts the least on the links (no detour without need).
    objective = links.sum(axis=0) + 1e-6
    return _solve(objective, [*links, *floor_rows], [*caps, *floor_bounds])

"""The max-min fair share of every flow of a scenario, multipath users pooling their paths.

The theoretical baseline of the MPTCP fairness studies: each user's rate is the sum of what it
sends on its paths, a TCP user has one path, and the allocation is max-min fair over users'
rates with the links' capacities as the only constraints. It gives the "optimal without probing
cost" column of draft-khalili-mptcp-performance-issues-06 for its Scenarios A and C (spec §5.4):
every user gets C = 1 Mbit/s, which LIA does not give the single-path users.

With ``floors``, some paths must carry at least a given rate: the draft's "optimal with probing
cost", where every subflow of a multipath user carries at least π, one segment per round trip
(spec §5.4), so that a path it would best leave alone still costs the others π per user.
:func:`probing_floors` gives those floors from a run's measured round-trip times.

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

import functools
import itertools
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, NamedTuple

import numpy as np

from mptcplab.analysis._checks import as_mapping, check_hops, link_capacities, listed, unknown_names
from mptcplab.analysis.metrics import (
    HEADER_BYTES,
    MSS_BYTES,
    PAYLOAD_FRACTION,
    active_through_window,
    greedy_through_window,
)

if TYPE_CHECKING:
    from mptcplab.results import Report
    from mptcplab.scenario.model import Scenario

# HiGHS's feasibility tolerances (default 1e-7), tightened so that the levels it finds are
# exact to well below the first slack.
_SOLVER_OPTIONS = {"primal_feasibility_tolerance": 1e-10, "dual_feasibility_tolerance": 1e-10}
# Relative slacks of the levels a program must keep, the smallest first (see _Programs.solve).
_SLACKS = (0.0, 1e-9, 1e-7, 1e-5)
# linprog's status for an infeasible program.
_INFEASIBLE = 2
# linprog's status when the solver met numerical difficulties; the interior-point method,
# tried next, solves programs on which HiGHS's simplex stalls at the tolerances above (links
# of 0.01 and 900 Mbit/s with users of 40 on one program).
_NUMERICAL_DIFFICULTIES = 4
_METHODS = ("highs", "highs-ipm")
# The smallest coefficient the programs hold (HiGHS treats those below 1e-9 as zero).
_SMALLEST_COEFFICIENT = 1e-7
# A user that can go less than this (relative) beyond the level is held at it; more when the
# program kept its floors less a slack (see _Programs.exceeds).
_EXCEEDS = 1e-6


@dataclass(frozen=True)
class FairShare:
    """Max-min fair goodput per flow spec (each of its ``count`` flows gets this much) and how
    each splits it over its paths (one way to reach it; the split need not be unique)."""

    per_flow_mbps: dict[str, float]
    per_path_mbps: dict[str, list[float]]

    def of(self, flow_id: str) -> float:
        """The share of a report's flow, ``id`` or ``id#k``."""
        return self.per_flow_mbps[flow_id.split("#", 1)[0]]


class _Flow(NamedTuple):
    """What the shares depend on of one flow entry: ``floors``, per path, the rate on the wire
    (Mbit/s) one of its users must send there at least."""

    id: str
    count: int
    paths: tuple[tuple[str, ...], ...]
    floors: tuple[float, ...]


# Per flow entry its level and its path rates, goodput Mbit/s, in the order of the entries.
_Shares = tuple[tuple[float, ...], tuple[tuple[float, ...], ...]]


def compares_with_goodput(scenario: Scenario | Mapping[str, Any]) -> bool:
    """Whether the shares can be set beside measured goodputs: they take every flow as active
    through the measurement window, which a flow starting after the warm-up, or stopping
    before the end, is not."""
    data = as_mapping(scenario, "scenario", "Scenario")
    return all(active_through_window(flow, data) for flow in data["flows"])


def shares_compare_with_goodput(scenario: Scenario | Mapping[str, Any]) -> bool:
    """Whether :func:`fair_share`'s shares can be set beside measured goodputs: they take
    every flow as greedy and active through the measurement window. A finite transfer or a
    block writer wants less than a share (what it leaves, the others take), and a transfer that
    completes early is gone for part of the window, as a flow that stops is."""
    data = as_mapping(scenario, "scenario", "Scenario")
    return all(greedy_through_window(flow, data) for flow in data["flows"])


class InfeasibleFloors(ValueError):
    """The paths' floors alone need more than some link's capacity."""


def fair_share(
    scenario: Scenario | Mapping[str, Any],
    floors: Mapping[str, Sequence[float]] | None = None,
) -> FairShare:
    """The max-min fair goodput of every flow of ``scenario`` (a Scenario or its dictionary).

    ``floors``: per flow entry id, per path, the least rate on the wire (Mbit/s) each of its
    users must send on that path; raises :class:`InfeasibleFloors` when the links cannot carry
    them all. A scenario without flows has no shares (empty tables)."""
    data = as_mapping(scenario, "scenario", "Scenario")
    floors = floors or {}
    capacity = link_capacities(data)
    check_hops(data, capacity)
    unknown_names(list(floors), (f["id"] for f in data["flows"]), "floors", "flow entry")
    if not data["flows"]:
        return FairShare(per_flow_mbps={}, per_path_mbps={})
    links = tuple(capacity.items())
    flows = []
    for f in data["flows"]:
        paths = tuple(tuple(path) for path in f["paths"])
        given = floors.get(f["id"], [0.0] * len(paths))
        least = tuple(float(v) for v in listed(given, f"floors of {f['id']!r}", "rates"))
        if len(least) != len(paths) or any(not v >= 0 for v in least):
            raise ValueError(f"floors of {f['id']!r}: expected {len(paths)} rates ≥ 0, got {least}")
        flows.append(_Flow(f["id"], int(f.get("count", 1)), paths, least))
    levels, paths = _shares(links, tuple(flows))
    return FairShare(
        per_flow_mbps={flow.id: level for flow, level in zip(flows, levels, strict=True)},
        per_path_mbps={flow.id: list(rates) for flow, rates in zip(flows, paths, strict=True)},
    )


def probing_floors(
    report: Report | Mapping[str, Any], scenario: Scenario | Mapping[str, Any]
) -> dict[str, list[float]] | None:
    """The draft's probing cost as floors for :func:`fair_share`: every path of a multipath
    flow entry (an MPTCP entry with two paths or more) carries at least one full segment per
    round trip, the round trip being the mean of the entry's measured smoothed RTTs on that
    path in ``report`` (queueing included, as the draft's "RTT ≈ 150 ms including queueing
    delay"). ``report``: what :func:`mptcplab.sim.run` returns, or its dictionary. None when
    some such path has no measured RTT."""
    data = as_mapping(scenario, "scenario", "Scenario")
    measured = as_mapping(report, "report", "Report")
    floors: dict[str, list[float]] = {}
    for flow in data["flows"]:
        if flow.get("protocol") != "mptcp" or len(flow["paths"]) < 2:
            continue
        rtts: list[list[float]] = [[] for _ in flow["paths"]]
        for reported in measured["flows"]:
            if reported["id"].split("#", 1)[0] != flow["id"]:
                continue
            for sub in reported["subflows"]:
                rtt = sub.get("mean_srtt_ms")
                if rtt is not None and rtt > 0 and sub["index"] < len(rtts):
                    rtts[sub["index"]].append(float(rtt))
        if not all(rtts):
            return None
        segment_bits = (MSS_BYTES + HEADER_BYTES) * 8
        floors[flow["id"]] = [segment_bits / (sum(r) / len(r) * 1e3) for r in rtts]
    return floors


# A run's two fair-share metrics, and the two tables of `mptcplab sim`, ask for the shares of
# the same scenario: its programs are solved once.
@functools.lru_cache(maxsize=32)
def _shares(links: tuple[tuple[str, float], ...], flows: tuple[_Flow, ...]) -> _Shares:
    capacity = dict(links)
    if len(flows) == 1 and flows[0].count == 1:
        alone = _alone_on_disjoint_paths(flows[0], capacity)
        # Filling every path, it sends more than any floor its paths can carry.
        if alone is not None and all(
            least * PAYLOAD_FRACTION <= rate
            for least, rate in zip(flows[0].floors, alone[1][0], strict=True)
        ):
            return alone
    programs = _Programs(flows, capacity)
    programs.check_floors()
    fixed: dict[int, float] = {}
    active = set(range(len(flows)))
    while active:
        level = programs.raise_level(active, fixed)
        # Users that one program raising all of them together lifts beyond the level are not
        # stuck; only the others need a program of their own.
        lifted = programs.lift_all(level, active, fixed)
        stuck = [
            g
            for g in sorted(active)
            if g not in lifted and not programs.can_exceed(g, level, active, fixed)
        ]
        for g in stuck or sorted(active):
            fixed[g] = level
            active.discard(g)
    split = programs.split(fixed) * (programs.unit * PAYLOAD_FRACTION)
    bounds = np.cumsum([0, *(len(flow.paths) for flow in flows)])
    return (
        tuple(fixed[g] * programs.unit * PAYLOAD_FRACTION for g in range(len(flows))),
        tuple(tuple(float(x) for x in split[a:b]) for a, b in itertools.pairwise(bounds)),
    )


def _alone_on_disjoint_paths(flow: _Flow, capacity: dict[str, float]) -> _Shares | None:
    """One user whose paths share no link fills each path's narrowest link: no program needed
    (the common case of a campaign's runs, whose metrics are computed as each run ends)."""
    hops = [hop for path in flow.paths for hop in path]
    if len(hops) != len(set(hops)):
        return None
    paths = tuple(min(capacity[hop] for hop in path) * PAYLOAD_FRACTION for path in flow.paths)
    return (sum(paths),), (paths,)


# A floor ``row @ x >= value``.
Floor = tuple[np.ndarray, float]


class _Programs:
    """The linear programs of progressive filling over one scenario's flows.

    One variable per (flow spec, path): the rate of one of its users on that path, bounded by
    the path's narrowest link. Scaled so that the solver's tolerances stay small beside every
    number: each link's row over its capacity (right-hand sides 1), each floor over its level,
    and rates in units of the smallest even share min_l C_l / N_l (N_l: users crossing l), which
    every fair rate reaches (all users at that rate on their first path fit) — a larger unit
    only when a coefficient would otherwise fall below what the solver keeps (capacities and
    populations a billion times apart).
    """

    def __init__(self, flows: tuple[_Flow, ...], capacity: dict[str, float]) -> None:
        owner = [g for g, flow in enumerate(flows) for _ in flow.paths]
        used = sorted({hop for flow in flows for path in flow.paths for hop in path})
        row_of = {link: r for r, link in enumerate(used)}
        load = np.zeros((len(used), len(owner)))
        crossing = np.zeros(len(used))
        v = 0
        for flow in flows:
            for hop in {hop for path in flow.paths for hop in path}:
                crossing[row_of[hop]] += flow.count
            for path in flow.paths:
                for hop in path:
                    load[row_of[hop], v] += flow.count
                v += 1
        caps = np.array([capacity[link] for link in used])
        per_unit = load / caps[:, None]
        smallest = float(per_unit[per_unit > 0].min())
        # The solver drops coefficients below 1e-9: keep the smallest one well above that.
        self.unit = max(float(np.min(caps / crossing)), _SMALLEST_COEFFICIENT / smallest)
        self.links = per_unit * self.unit
        self.upper = 1.0 / self.links.max(axis=0)
        self.lower = np.array([v for flow in flows for v in flow.floors]) / self.unit
        # rate[g] @ x: user g's rate, the sum of its path variables.
        self.rate = np.zeros((len(flows), len(owner)))
        self.rate[owner, np.arange(len(owner))] = 1.0
        self.counts = np.array([flow.count for flow in flows], dtype=float)

    def floors(self, fixed: dict[int, float], active: set[int], level: float) -> list[Floor]:
        """Fixed users keep their level, the active ones ``level``."""
        return [(self.rate[g], v) for g, v in fixed.items()] + [
            (self.rate[g], level) for g in active
        ]

    def solve(
        self, objective: np.ndarray, floors: list[Floor], level_column: bool = False
    ) -> np.ndarray:
        return self.solve_with_slack(objective, floors, level_column)[0]

    def solve_with_slack(
        self, objective: np.ndarray, floors: list[Floor], level_column: bool = False
    ) -> tuple[np.ndarray, float]:
        """Minimise ``objective`` within the links' capacities, the floors kept less a slack:
        a level the solver found may lie a few 1e-9 above the true one, so a floor at it exactly
        can make the next program infeasible; a larger slack is tried only then. With
        ``level_column`` the program has one more variable, a level t >= 0, which the caller's
        objective and floors use."""
        # Imported here: a campaign's run workers compute this metric for every run, and most
        # runs (one flow on disjoint paths) need no program.
        from scipy.optimize import linprog

        links = self.links
        bounds = list(zip(self.lower, self.upper, strict=True))
        if level_column:
            links = np.hstack([links, np.zeros((links.shape[0], 1))])
            bounds.append((0.0, None))
        # A floor row @ x >= v as (row / v) @ x >= 1 (v > 0): the solver's absolute tolerance
        # is then relative to the level, however small the level is.
        rows = [-row / v if v > 0 else -row for row, v in floors]
        rhs = np.array([-1.0 if v > 0 else 0.0 for _, v in floors])
        for slack in _SLACKS:
            a_ub = np.vstack([links, *rows])
            b_ub = np.concatenate([np.ones(len(links)), rhs * (1 - slack)])
            for method in _METHODS:
                result = linprog(
                    objective,
                    A_ub=a_ub,
                    b_ub=b_ub,
                    bounds=bounds,
                    method=method,
                    options=_SOLVER_OPTIONS,
                )
                if result.status != _NUMERICAL_DIFFICULTIES:
                    break
            if result.status == 0:
                return np.asarray(result.x), slack
            if result.status != _INFEASIBLE:
                break
        raise RuntimeError(f"fair share: the linear program failed: {result.message}")

    def check_floors(self) -> None:
        """Raise :class:`InfeasibleFloors` where the floors alone overfill a path or a link."""
        load = self.links @ self.lower
        if np.any(self.lower > self.upper) or np.any(load > 1.0 + 1e-9):
            raise InfeasibleFloors(
                "the paths' floors need more than the links' capacity "
                f"(the most loaded link at {float(load.max()):.0%})"
            )

    def raise_level(self, active: set[int], fixed: dict[int, float]) -> float:
        """The highest level every active user can reach together, the fixed ones keeping
        theirs."""
        n = self.links.shape[1]
        # rate[g] - t >= 0 for the active users; fixed users' floors get a zero t column.
        floors = [(np.append(self.rate[g], -1.0), 0.0) for g in active]
        floors += [(np.append(row, 0.0), v) for row, v in self.floors(fixed, set(), 0.0)]
        objective = np.zeros(n + 1)
        objective[-1] = -1.0
        return float(self.solve(objective, floors, level_column=True)[-1])

    def exceeds(self, g: int, x: np.ndarray, level: float, slack: float) -> bool:
        """Whether user ``g``'s rate in ``x`` lies beyond ``level``. With floors kept less a
        relative slack, the capacity the other users give up can all go to ``g``: as many times
        the slack as there are users per user of ``g`` (a slack of 1e-9 over a thousand users
        lifts a lone one by 1e-6). Such gains are the program's, not the network's."""
        margin = max(_EXCEEDS, 10 * slack * float(self.counts.sum()) / self.counts[g])
        return float(self.rate[g] @ x) > level * (1 + margin)

    def lift_all(self, level: float, active: set[int], fixed: dict[int, float]) -> set[int]:
        """The active users beyond ``level`` when the sum of their rates is maximised."""
        objective = -self.rate[sorted(active)].sum(axis=0)
        x, slack = self.solve_with_slack(objective, self.floors(fixed, active, level))
        return {g for g in active if self.exceeds(g, x, level, slack)}

    def can_exceed(self, g: int, level: float, active: set[int], fixed: dict[int, float]) -> bool:
        """Whether user ``g`` can go beyond ``level`` while every other keeps what it has."""
        x, slack = self.solve_with_slack(-self.rate[g], self.floors(fixed, active, level))
        return self.exceeds(g, x, level, slack)

    def split(self, fixed: dict[int, float]) -> np.ndarray:
        """Path rates that give every user its fair share; among them, the one that puts the
        least on the links (no detour without need)."""
        objective = self.links.sum(axis=0) + 1e-6
        return self.solve(objective, self.floors(fixed, set(), 0.0))

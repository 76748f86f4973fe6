"""From a campaign to its runs: designs, variants, scenarios, seeds and run keys.

- Design ``k`` (of ``designs``) is drawn in [0, 1]^d from the stream ``SeedSequence(seed,
  spawn_key=(k,))`` and scaled to the quantitative factors' domains (mptcplab.design).
- Every combination of qualitative levels (a variant) sees the same points, so variants can be
  compared point by point.
- A run's seed derives from (campaign seed, design, point, replication) only: variants of one
  point and replication share their seed — common random numbers for paired comparisons.
- A run's key is the SHA-256 of its scenario (which holds the seed), the backend's name and the
  backend's version: the same run is never executed twice, whatever campaign schedules it.
- With ``reference_runs``, each MPTCP run also gets one single-path TCP run per path (same
  network, same seed, the MPTCP flow replaced by a TCP flow on that path), whose goodputs are the
  measured C_i of the aggregation benefit (spec §5.1, §8 item 9).
"""

from __future__ import annotations

import copy
import hashlib
import itertools
import json
import math
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from mptcplab.campaign.spec import BACKEND_LEVEL, Campaign, Target, assign
from mptcplab.campaign.store import TaskRow
from mptcplab.design.factors import POINT_INDEX
from mptcplab.errors import UserError

# Fields a TCP flow does not take (MPTCP-only options of crates/mpsim/src/scenario.rs FlowSpec).
_MPTCP_ONLY_FIELDS = ("scheduler", "penalization", "opportunistic_retransmit", "join_delay_s")


@dataclass(frozen=True)
class PlannedRun:
    row: TaskRow
    scenario: dict[str, Any]
    backend: str  # name in mptcplab.campaign.backends.BACKENDS


@dataclass(frozen=True)
class DesignPoints:
    index: int
    kind: str
    factor_names: tuple[str, ...]
    unit_points: np.ndarray  # (n, d) in [0, 1]^d, integer factors at their rounded values
    values: list[dict[str, Any]]  # one dict per point: quantitative factor -> scaled value
    # Points drawn that rounding the integer factors made equal to an earlier one (dropped).
    merged: int = 0


@dataclass(frozen=True)
class Plan:
    designs: tuple[DesignPoints, ...]
    tasks: tuple[PlannedRun, ...]  # in execution order; a key may appear more than once

    def unique_runs(self) -> dict[str, PlannedRun]:
        runs: dict[str, PlannedRun] = {}
        for task in self.tasks:
            runs.setdefault(task.row.run_key, task)
        return runs


def derive_seed(campaign_seed: int, design: int, point: int, replication: int) -> int:
    """A run's seed: 63 bits of SHA-256 over its coordinates (fits SQLite and the u64 seed)."""
    text = f"mptcplab/run-seed/{campaign_seed}/{design}/{point}/{replication}"
    return int.from_bytes(hashlib.sha256(text.encode()).digest()[:8], "big") >> 1


def run_key(scenario: Mapping[str, Any], backend: str, backend_version: str) -> str:
    canonical = json.dumps(
        {"scenario": scenario, "backend": backend, "backend_version": backend_version},
        sort_keys=True,
        separators=(",", ":"),
    )
    return hashlib.sha256(canonical.encode()).hexdigest()


def design_points(
    campaign: Campaign, design: int, progress: Callable[[int, int], None] | None = None
) -> DesignPoints:
    """Points of design ``design``: unit-cube coordinates and their scaled factor values (an
    integer factor's coordinates are those of its rounded values).
    ``progress`` is told how far a long generation is (``mptcplab.design.generate``)."""
    from mptcplab.design import generate
    from mptcplab.design.factors import scale

    factors = campaign.quantitative
    spec = campaign.spec.design
    names = tuple(f.name for f in factors)
    if not factors:
        # Only qualitative factors: one point, the variants are the whole experiment.
        return DesignPoints(design, spec.kind, names, np.zeros((1, 0)), [{}])
    rng = np.random.SeedSequence(campaign.spec.seed, spawn_key=(design,))
    try:
        unit = generate(
            spec.kind, len(factors), spec.points, rng=rng, progress=progress, **spec.options
        )
    except (TypeError, ValueError) as exc:
        raise UserError(f"cannot build the design: {exc}", **campaign.where("design")) from None
    # Integer factors may round two points onto one: keep the first (spec §4.1).
    frame = scale(unit, factors, dedupe=True)
    kept = frame.index.to_numpy()
    values = [
        {name: _plain(value) for name, value in row.items()} for row in frame.to_dict("records")
    ]
    merged = len(unit) - len(kept)
    # The design that runs is the rounded one: its integer coordinates are those of the values
    # run, so that its quality (the report, `mptcplab design`) is measured on what ran.
    run = np.array(np.asarray(unit)[kept], dtype=float)
    for j, factor in enumerate(factors):
        if factor.kind == "integer":
            run[:, j] = factor.to_unit(frame[factor.name].to_numpy())
    return DesignPoints(design, spec.kind, names, run, values, merged)


def merged_notice(campaign: Campaign, plan: Plan) -> str | None:
    """What rounding the integer factors took from the designs, or None when it took nothing:
    a design keeps one of the points that round to the same values (spec §4.1), so an integer
    range narrower than the design has fewer points than it asks for."""
    merged = [d for d in plan.designs if d.merged]
    if not merged:
        return None
    integers = [f.name for f in campaign.quantitative if f.kind == "integer"]
    kept = ", ".join(
        (f"design {d.index}: " if len(plan.designs) > 1 else "")
        + f"{len(d.values)} distinct points of the {len(d.values) + d.merged} drawn"
        for d in merged
    )
    return (
        f"rounding the integer factor{'s' if len(integers) > 1 else ''} "
        f"{', '.join(integers)} made design points equal, and each is run once: {kept}"
    )


def _plain(value: Any) -> Any:
    """numpy scalars to Python ones (JSON, pydantic strict mode)."""
    return value.item() if isinstance(value, np.generic) else value


def runs_table(
    campaign: Campaign, design: DesignPoints
) -> list[tuple[int, dict[str, Any], dict[str, str]]]:
    """(point, quantitative values, variant levels) for every variant of every point, point by
    point with all variants together, so an interrupted campaign leaves comparable results."""
    from mptcplab.design import cross

    names = list(design.factor_names)
    frame = pd.DataFrame(design.values, columns=names)
    qualitative = {f.name: list(f.levels) for f in campaign.qualitative}
    table = cross(frame, qualitative).sort_values(POINT_INDEX, kind="stable")
    out = []
    for row in table.to_dict("records"):
        values = {name: _plain(row[name]) for name in names}
        levels = {name: str(row[name]) for name in qualitative}
        out.append((int(row[POINT_INDEX]), values, levels))
    return out


def level_assignments(campaign: Campaign, levels: Mapping[str, str]) -> dict[Target, Any]:
    """Template assignments made by one variant's levels."""
    out: dict[Target, Any] = {}
    for factor in campaign.qualitative:
        out.update(factor.levels[levels[factor.name]])
    return out


def build_scenario(campaign: Campaign, assignments: Mapping[Target, Any]) -> dict[str, Any]:
    """The scenario of one design point and variant, as plain JSON data (seed not yet set)."""
    params = assign(campaign.fixed, assignments, campaign.list_defaults)
    try:
        return campaign.template(**params).to_dict()  # type: ignore[no-any-return]
    except UserError as exc:
        raise _template_error(campaign, assignments, exc.field, exc.detail) from None
    except (TypeError, ValueError) as exc:  # pydantic's ValidationError is a ValueError
        brief = " ".join(str(exc).strip().splitlines()[:3])
        raise _template_error(campaign, assignments, None, brief) from None


def _template_error(
    campaign: Campaign, assignments: Mapping[Target, Any], field: str | None, detail: str
) -> UserError:
    """Point at the campaign key responsible: the factor that set the parameter, else the fixed
    parameter, else the [scenario] table."""
    if campaign.scenario_file is not None:
        return _scenario_file_error(campaign, assignments, field, detail)
    element = (field or "").split(".", 1)[0]
    param = element.split("[", 1)[0]
    message = f"{campaign.scenario_source} rejected {element or 'the parameters'}"
    exact = [v for t, v in assignments.items() if str(t) == element]
    shown = ", ".join(f"{t} = {v!r}" for t, v in assignments.items() if t.param == param)
    if exact:  # one element of a list, or a scalar parameter: its value alone
        message += f" = {exact[0]!r}"
    elif shown:  # the list as a whole: every element the factors set
        message += f" ({shown})"
    message += f": {detail}"
    owner = _owner_of(campaign, param, element)
    if owner is not None:
        return UserError(message, **campaign.where(*_factor_loc(campaign, owner, assignments)))
    if param in campaign.fixed:
        return UserError(message, **campaign.where("scenario", param))
    return UserError(message, **campaign.where("scenario"))


def _scenario_file_error(
    campaign: Campaign, assignments: Mapping[Target, Any], field: str | None, detail: str
) -> UserError:
    """A run's scenario is invalid: the factor (or fixed key) that set the field at fault."""
    value = next((v for t, v in assignments.items() if str(t) == field), None)
    if value is None and field in campaign.fixed:
        value = campaign.fixed[field]
    message = f"{campaign.scenario_source} with {field} = {value!r}: {detail}"
    owner = campaign.owners.get(Target(field or ""))
    if owner is not None:
        return UserError(message, **campaign.where(*_factor_loc(campaign, owner, assignments)))
    if field in campaign.fixed:
        return UserError(message, **campaign.where("scenario", campaign.fixed_written[field]))
    return UserError(
        f"{campaign.scenario_source} gives an invalid scenario: {field}: {detail}",
        **campaign.where("scenario", "file"),
    )


def _factor_loc(
    campaign: Campaign, owner: str, assignments: Mapping[Target, Any]
) -> tuple[str | int, ...]:
    """Where factor ``owner`` is written; for a qualitative one, the level of this variant (the
    other levels may be fine)."""
    factor = next((f for f in campaign.qualitative if f.name == owner), None)
    if factor is None:
        return ("factors", owner)
    written = campaign.spec.factors[owner].levels
    for position, (label, level) in enumerate(factor.levels.items()):
        if all(t in assignments and assignments[t] == v for t, v in level.items()):
            if isinstance(written, list):
                return ("factors", owner, "levels", position)
            return ("factors", owner, "levels", label)
    return ("factors", owner)


def _owner_of(campaign: Campaign, param: str, element: str) -> str | None:
    """The factor behind a template's complaint about ``element``: the one setting that very
    element ("rtt_ms[1]"), else, for a complaint about the whole list (its length), the one
    setting its last element."""
    owned = {t: name for t, name in campaign.owners.items() if t.param == param}
    exact = next((name for t, name in owned.items() if str(t) == element), None)
    if exact is not None or not owned:
        return exact
    return owned[max(owned, key=lambda t: -1 if t.index is None else t.index)]


def reference_scenarios(scenario: Mapping[str, Any], campaign: Campaign) -> list[dict[str, Any]]:
    """One single-path TCP scenario per path of the scenario's MPTCP flow."""
    flows = scenario["flows"]
    mptcp = [i for i, f in enumerate(flows) if f["protocol"] == "mptcp"]
    if len(mptcp) != 1 or flows[mptcp[0]].get("count", 1) != 1:
        raise UserError(
            "reference_runs needs scenarios with exactly one MPTCP flow (count = 1); "
            f"{campaign.scenario_source} gives {len(mptcp)}",
            **campaign.where("reference_runs"),
        )
    index = mptcp[0]
    out = []
    for path in flows[index]["paths"]:
        reference = copy.deepcopy(dict(scenario))
        flow = reference["flows"][index]
        for field in _MPTCP_ONLY_FIELDS:
            flow.pop(field, None)
        flow["protocol"] = "tcp"
        flow["cc"] = campaign.spec.reference_cc
        flow["paths"] = [list(path)]
        out.append(reference)
    return out


def _seeded(scenario: Mapping[str, Any], seed: int) -> dict[str, Any]:
    out = dict(scenario)
    out["seed"] = seed
    return out


def _iter_tasks(
    campaign: Campaign, designs: tuple[DesignPoints, ...], backends: Sequence[tuple[str, str]]
) -> Iterator[PlannedRun]:
    spec = campaign.spec
    for design in designs:
        for point, values, template_levels in runs_table(campaign, design):
            assignments = {campaign.targets[name]: v for name, v in values.items()}
            assignments.update(level_assignments(campaign, template_levels))
            base = build_scenario(campaign, assignments)
            references = reference_scenarios(base, campaign) if spec.reference_runs else []
            # Cross-validation: every backend runs the same scenario with the same seed, one
            # after the other for each point, so an interrupted campaign stays comparable.
            for (backend, version), replication in itertools.product(
                backends, range(spec.replications)
            ):
                levels = dict(template_levels)
                if campaign.cross_validation:
                    levels[BACKEND_LEVEL] = backend
                seed = derive_seed(spec.seed, design.index, point, replication)
                common = {
                    "design": design.index,
                    "point": point,
                    "variant": levels,
                    "factors": values,
                    "replication": replication,
                    "seed": seed,
                }
                ref_runs = []
                for path, reference in enumerate(references):
                    scenario = _seeded(reference, seed)
                    key = run_key(scenario, backend, version)
                    row = TaskRow(run_key=key, role="reference", path=path, **common)
                    ref_runs.append(PlannedRun(row, scenario, backend))
                scenario = _seeded(base, seed)
                row = TaskRow(
                    run_key=run_key(scenario, backend, version),
                    role="main",
                    reference_keys=[r.row.run_key for r in ref_runs] if ref_runs else None,
                    **common,
                )
                yield PlannedRun(row, scenario, backend)
                yield from ref_runs


def build_plan(
    campaign: Campaign,
    *,
    backend: str | None = None,
    backend_version: str | None = None,
    versions: Mapping[str, str] | None = None,
    progress: Callable[[int, int], None] | None = None,
) -> Plan:
    """The campaign's runs. ``versions`` maps each of the campaign's backends to its version
    string (it enters the run keys); ``backend`` and ``backend_version`` name a single one.
    Given none of them, the campaign's own backends are asked for their versions, as
    ``mptcplab run`` does. ``progress`` is told (steps done, steps expected) while the designs
    are generated, where that is long (a WSP design of thousands of points)."""
    if versions is None:
        if backend is None and backend_version is None:
            from mptcplab.campaign.runner import backends_of  # the runner imports this module

            versions = {name: version for name, (_, version) in backends_of(campaign).items()}
        elif backend is None or backend_version is None:
            raise TypeError("build_plan: give backend and backend_version together")
        else:
            versions = {backend: backend_version}
    backends = [(name, versions[name]) for name in versions]
    count = campaign.spec.design.designs
    designs = tuple(design_points(campaign, k, _one_of(progress, k, count)) for k in range(count))
    _check_size(campaign, designs, len(backends))
    tasks = tuple(_iter_tasks(campaign, designs, backends))
    main = [t for t in tasks if t.row.role == "main"]
    _check_metrics_apply(campaign, main)
    _check_published_settings(campaign, main)
    return Plan(designs, tasks)


def _one_of(
    progress: Callable[[int, int], None] | None, index: int, count: int
) -> Callable[[int, int], None] | None:
    """Design ``index`` of ``count`` as a share of the whole: each design is a thousand steps
    of it, filled in proportion to the design's own progress."""
    if progress is None:
        return None

    def told(done: int, expected: int) -> None:
        progress(index * 1000 + (1000 * done) // max(expected, 1), count * 1000)

    return told


#: Most runs one campaign may plan (each is a task in memory and a row in the store; a
#: campaign of ten billion replications ran out of memory while planning).
MAX_RUNS = 1_000_000


def _check_size(campaign: Campaign, designs: Sequence[DesignPoints], backends: int) -> None:
    points = sum(len(d.values) for d in designs)
    variants = math.prod(len(f.levels) for f in campaign.qualitative)
    runs = points * variants * backends * campaign.spec.replications
    if runs > MAX_RUNS:
        terms = " × ".join(
            _counted(n, noun)
            for n, noun in (
                (points, "point"),
                (variants, "variant"),
                (backends, "backend"),
                (campaign.spec.replications, "replication"),
            )
        )
        raise UserError(
            f"the campaign plans {runs:,} runs ({terms}), more than {MAX_RUNS:,}; "
            "lower the replications, the points or the levels",
            **campaign.where("replications"),
        )


def _counted(n: int, noun: str) -> str:
    return f"{n:,} {noun}" + ("" if n == 1 else "s")


def _check_metrics_apply(campaign: Campaign, runs: Sequence[PlannedRun]) -> None:
    """A flow-entry metric (``user_goodput_mbps.type2``) must name a flow entry of the runs, and
    a metric with needs (an MPTCP flow, a blocks application, ...) must find them in some run."""
    from mptcplab.analysis.metric_needs import unmet_need
    from mptcplab.analysis.metrics import unknown_flow_entry

    flows = {f["id"] for run in runs for f in run.scenario["flows"]}
    named = [(m, ("metrics", i)) for i, m in enumerate(campaign.spec.metrics)]
    named += [(e.metric, ("published", i, "metric")) for i, e in enumerate(campaign.spec.published)]
    for metric, loc in named:
        problem = unknown_flow_entry(metric, flows) or unmet_need(
            metric, (run.scenario for run in runs), "the campaign's scenarios"
        )
        if problem is not None:
            raise UserError(problem, **campaign.where(*loc))


def _check_published_settings(campaign: Campaign, runs: Sequence[PlannedRun]) -> None:
    """Each published figure must be at the settings of some planned run, or the report could
    set nothing beside it."""
    from mptcplab.analysis.published import describe_settings, settings_match

    settings = [{**run.row.factors, **run.row.variant} for run in runs]
    for i, entry in enumerate(campaign.spec.published):
        wanted = [("at", entry.at)]
        if entry.relative_to:
            wanted.append(("relative_to", {**entry.at, **entry.relative_to}))
        for field, at in wanted:
            if not any(settings_match(at, s) for s in settings):
                raise UserError(
                    f"no run of the campaign is at {describe_settings(at)}: a quantitative "
                    "factor's value must be one of the design's points (a factorial design's "
                    "levels, for instance)",
                    **campaign.where("published", i, field),
                )

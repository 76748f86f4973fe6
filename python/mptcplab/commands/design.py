"""``mptcplab design``: generate a design, print it with its quality, optionally save it.

mptcplab design campaigns/quickstart.toml            # the campaign's design, scaled
mptcplab design --kind wsp --dims 6 --points 200 -o design.csv   # a unit-cube design
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer
from rich.table import Table

from mptcplab.commands.campaign_file import SetOption, load_campaign
from mptcplab.commands.console import command_console, print_table, stage_bar
from mptcplab.commands.path_value import path_value
from mptcplab.errors import UserError
from mptcplab.outputs import check_writable, writing

if TYPE_CHECKING:
    # numpy and pandas take a fifth and half a second to import; every command line pays for
    # what cli imports.
    import numpy as np
    import pandas as pd

_QUALITY_ROWS = (
    ("n", "points"),
    ("d", "dimensions"),
    ("mindist", "minimum distance (larger is better)"),
    ("phi_p", "φ50, Morris–Mitchell (smaller is better)"),
    ("coverage", "coverage (0 = regular grid)"),
    ("mesh_ratio", "mesh ratio (1 = regular grid)"),
    ("mst_mean", "MST edge mean (larger is better)"),
    ("mst_std", "MST edge std (smaller is better)"),
    ("cd2", "centred L2 discrepancy"),
    ("wd2", "wrap-around L2 discrepancy"),
    ("l2_star", "L2-star discrepancy"),
    ("mindist_2d_worst", "worst 2-D projection mindist"),
)

# The campaign keys behind the unit-cube options (--dims has none: it is the factor count).
_CAMPAIGN_KEYS = {
    "--kind": "design.kind=KIND",
    "--points": "design.points=N",
    "--seed": "seed=N",
    "--option": "design.options.KEY=VALUE",
}


def _parse_options(options: list[str]) -> dict[str, Any]:
    parsed: dict[str, Any] = {}
    for item in options:
        key, sep, raw = item.partition("=")
        if not sep or not key:
            raise UserError(f"expected KEY=VALUE, got {item!r}", field="--option")
        try:
            parsed[key] = json.loads(raw)
        except json.JSONDecodeError:
            parsed[key] = raw
    return parsed


def quality_table(points: np.ndarray, progress: Callable[[int, int], None] | None = None) -> Table:
    from mptcplab.design import quality

    table = Table("measure", "value", title="design quality (unit cube)", title_justify="left")
    if points.shape[0] < 2:
        # The measures need two points; the size is still worth showing, under its usual names.
        table.add_row("points", str(points.shape[0]))
        table.add_row("dimensions", str(points.shape[1]))
        return table
    q = quality(points, projections=points.shape[1] >= 2, progress=progress)
    for key, label in _QUALITY_ROWS:
        if key in q and not (isinstance(q[key], float) and math.isnan(q[key])):
            value = q[key]
            table.add_row(label, f"{value:.5g}" if isinstance(value, float) else str(value))
    return table


def _frame_table(frame: pd.DataFrame, limit: int) -> Table:
    table = Table(
        *[str(c) for c in frame.columns],
        title_justify="left",
        title=f"first {min(limit, len(frame))} of {len(frame)} points",
    )
    for row in frame.head(limit).itertuples(index=False):
        table.add_row(*[f"{v:.4g}" if isinstance(v, float) else str(v) for v in row])
    return table


def design_command(
    campaign_file: Annotated[
        Path | None,
        typer.Argument(
            metavar="CAMPAIGN", help="Campaign file whose design to generate.", parser=path_value
        ),
    ] = None,
    kind: Annotated[
        str | None, typer.Option("--kind", help="wsp, lhs, sobol, factorial or random.")
    ] = None,
    dims: Annotated[int | None, typer.Option("--dims", "-d", min=1, help="Dimensions.")] = None,
    points: Annotated[int | None, typer.Option("--points", "-n", min=1, help="Points.")] = None,
    seed: Annotated[
        int | None,
        typer.Option(
            "--seed",
            min=0,
            help="Random seed of a unit-cube design (default 1). A campaign's design has the "
            "campaign's seed: --set seed=N changes it.",
        ),
    ] = None,
    option: Annotated[
        list[str] | None,
        typer.Option("--option", help="Engine option KEY=VALUE (repeatable), e.g. levels=3."),
    ] = None,
    design_index: Annotated[
        int | None,
        typer.Option("--design", min=0, help="Which of the campaign's designs (default 0)."),
    ] = None,
    output: Annotated[
        Path | None,
        typer.Option("--output", "-o", help="Save the points as CSV.", parser=path_value),
    ] = None,
    show: Annotated[int, typer.Option("--show", min=0, help="Points to print.")] = 10,
    measure: Annotated[
        bool,
        typer.Option(
            "--quality/--no-quality",
            help="Measure the design's quality (once in full and once per pair of factors, "
            "each O(points^2): thousands of points in tens of dimensions take long).",
        ),
    ] = True,
    changes: SetOption = None,
) -> None:
    """Generate a design, print its points and quality, optionally save it as CSV.

    With CAMPAIGN: exactly the design the campaign runs (its factors, kind, size and seed),
    scaled to the factors' domains. Without: a unit-cube design of --kind, --dims, --points.
    """
    import pandas as pd

    console = command_console()
    if changes and campaign_file is None:
        raise UserError("changes a campaign file, and none is given", field="--set")
    if output is not None:
        # Before the design is made: a WSP design of thousands of points takes minutes.
        check_writable(
            output, "the design", reads=() if campaign_file is None else (campaign_file,)
        )
    if campaign_file is not None:
        from mptcplab.campaign import build_plan
        from mptcplab.campaign.plan import merged_notice

        given = [
            name
            for name, v in (
                ("--kind", kind),
                ("--dims", dims),
                ("--points", points),
                ("--seed", seed),
                ("--option", option),
            )
            if v is not None and v != []
        ]
        if given:
            hint = ", ".join(f"--set {_CAMPAIGN_KEYS[n]}" for n in given if n in _CAMPAIGN_KEYS)
            raise UserError(
                f"{', '.join(given)} cannot be combined with a campaign file (it sets "
                f"{'them' if len(given) > 1 else 'it'})"
                + (f"; to change the campaign's: {hint}" if hint else ""),
                field=given[0],
            )
        campaign = load_campaign(campaign_file, changes)
        design_index = design_index or 0
        if design_index >= campaign.spec.design.designs:
            raise UserError(
                f"the campaign has {campaign.spec.design.designs} design(s); expected "
                f"--design < {campaign.spec.design.designs}",
                field="--design",
            )
        # The whole plan, as `status` and `run` build it: what only its scenarios reveal (a
        # level or a --set value the template rejects) must stop here too, not at the first run.
        # The backends' versions only enter the run keys, never shown here, so a campaign whose
        # backend is not built on this machine still shows its design.
        with stage_bar(f"planning the campaign ({campaign.spec.design.kind} design)") as told:
            plan = build_plan(
                campaign, versions=dict.fromkeys(campaign.backend_names, "?"), progress=told
            )
        design = plan.designs[design_index]
        unit = design.unit_points
        frame = pd.DataFrame(design.values)
        frame.insert(0, "point", range(len(frame)))
        shown = frame.copy()
        for j, name in enumerate(design.factor_names):
            frame[f"u_{name}"] = unit[:, j]
        console.print(
            f"[bold]{campaign.name}[/]: design {design_index} — {campaign.spec.design.kind}, "
            f"{_count(len(frame), 'point')} × {_count(len(design.factor_names), 'factor')}"
        )
        notice = merged_notice(campaign, plan)
        if notice is not None:
            console.print(f"[yellow]notice[/]: {notice}")
    else:
        from mptcplab.design import generate
        from mptcplab.design.generate import ENGINES, check_options

        if design_index is not None:
            raise UserError(
                "--design chooses one of a campaign's designs; it needs a campaign file",
                field="--design",
            )
        if kind is None or dims is None:
            raise UserError(
                "give a campaign file, or --kind and --dims (and --points)", field="design"
            )
        if points is None and kind in ENGINES and kind != "factorial":
            # The library names the argument n; on the command line it is --points.
            raise UserError(f"a {kind} design needs its number of points", field="--points")
        options = _parse_options(option or [])
        if "rng" in options:
            raise UserError("the design's seed is --seed, not an option", field="--option")
        try:
            check_options(kind, options)
        except ValueError as exc:
            raise UserError(str(exc), field="--option" if kind in ENGINES else "--kind") from None
        try:
            with stage_bar(f"generating a {kind} design") as told:
                unit = generate(
                    kind, dims, points, rng=1 if seed is None else seed, progress=told, **options
                )
        except ValueError as exc:
            raise UserError(str(exc)) from None
        frame = pd.DataFrame(unit, columns=[f"x{j}" for j in range(unit.shape[1])])
        frame.insert(0, "point", range(len(frame)))
        shown = frame
    if show:
        print_table(console, _frame_table(shown, show))
    if measure and unit.shape[1] >= 1:
        with stage_bar("measuring its quality") as told:
            table = quality_table(unit, told)
        print_table(console, table)
    if output is not None:
        with writing(output, "the design"):
            frame.to_csv(output, index=False)
        console.print(f"wrote {len(frame)} points to {output}")


def register(app: typer.Typer) -> None:
    app.command("design")(design_command)


def _count(n: int, noun: str) -> str:
    return f"{n} {noun}" if n == 1 else f"{n} {noun}s"

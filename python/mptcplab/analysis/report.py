"""The campaign report: one self-contained HTML file (inline CSS, PNG figures as data: URIs).

Sections: the campaign file, run status, the published figures the campaign carries beside ours
(:mod:`mptcplab.analysis.published`), design quality (spec §4.5), for each metric its
percentiles per variant, CDF and box plot, the metric against every factor and its heat map over
the two factors that explain most of it; every application block's latency pooled per variant
when the runs traced their blocks (:mod:`mptcplab.analysis.latency`); the worst points
("critical configurations"), sim/emu goodput per point when the campaign crosses backends
(:mod:`mptcplab.analysis.crossval`), the sensitivity table when the campaign has several designs
(spec §4.6), failed runs, and the provenance of every runner invocation.
"""

from __future__ import annotations

import base64
import contextlib
import html
import math
import tomllib
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
from pydantic import ValidationError

from mptcplab.analysis import plots
from mptcplab.analysis.heatmap import heat_grid
from mptcplab.analysis.latency import block_latencies, latency_table
from mptcplab.analysis.metrics import (
    CRITICAL_CLASSES,
    MSS_BYTES,
    critical_class,
    is_metric_name,
    metric_info,
)
from mptcplab.analysis.metrics_version import metrics_fingerprint
from mptcplab.analysis.paired import compare_variants, paired_differences
from mptcplab.analysis.published import compare_published, display_table
from mptcplab.analysis.sensitivity import sensitivity_table
from mptcplab.analysis.tables import (
    alike_replications,
    percentile_table,
    point_medians,
    to_pandas,
)
from mptcplab.analysis.unfinished import nonfinite_text, stalled_count, unfinished_count
from mptcplab.analysis.windows import window_traces
from mptcplab.campaign import overrides
from mptcplab.campaign.spec import PublishedSpec
from mptcplab.campaign.store import Store
from mptcplab.design import quality
from mptcplab.errors import UserError
from mptcplab.outputs import writing

WORST_POINTS = 12

# Fewest points a pair of levels needs for the sign test's 95 % interval (paired.py), and for
# the plot of its differences.
_MIN_PAIRED = 6

_CSS = """
body { font: 14px/1.45 -apple-system, "Segoe UI", Helvetica, Arial, sans-serif; color: #222;
       margin: 0; background: #f4f5f7; }
main { max-width: 1240px; margin: 0 auto; padding: 24px 32px 48px; background: #fff; }
h1 { font-size: 26px; margin: 8px 0 4px; }
h2 { font-size: 20px; margin: 36px 0 10px; padding-bottom: 4px; border-bottom: 2px solid #e3e6ea; }
h3 { font-size: 16px; margin: 22px 0 8px; }
p.lead { color: #555; margin: 0 0 12px; }
nav { background: #f0f3f7; border-radius: 6px; padding: 8px 14px; margin: 14px 0; }
nav a { margin-right: 14px; color: #1f5fa8; text-decoration: none; white-space: nowrap; }
table.data { border-collapse: collapse; margin: 8px 0 14px; font-size: 12px; }
table.data th, table.data td { padding: 3px 7px; border-bottom: 1px solid #e3e6ea;
                               text-align: right; }
table.data th { background: #f0f3f7; font-weight: 600; }
table.data td { white-space: nowrap; }
table.data td:first-child, table.data th:first-child { text-align: left; }
table.data tr:hover td { background: #fafbfc; }
.scroll { overflow-x: auto; }
pre.toml { background: #f7f8fa; border: 1px solid #e3e6ea; border-radius: 6px; padding: 12px;
           font-size: 12px; overflow-x: auto; max-height: 460px; }
img { max-width: 100%; height: auto; display: block; margin: 6px 0 12px; }
.badges span { display: inline-block; padding: 2px 10px; margin: 0 6px 6px 0; border-radius: 12px;
               background: #eef1f5; font-size: 13px; }
.badges .ok { background: #e3f4e6; } .badges .bad { background: #fbe3e3; }
.badges .wait { background: #fff4d6; }
.note { color: #666; font-size: 12.5px; }
code { background: #f0f3f7; padding: 0 4px; border-radius: 3px; }
"""


def _esc(value: object) -> str:
    return html.escape(str(value))


def _fmt(value: Any) -> str:
    if isinstance(value, float):
        if (text := nonfinite_text(value)) is not None:
            return text
        if value != 0 and (abs(value) >= 1e5 or abs(value) < 1e-3):
            return f"{value:.3e}"
        return f"{value:.4g}"
    return str(value)


def _table(frame: pd.DataFrame) -> str:
    if frame is None or frame.empty:
        return '<p class="note">nothing to show yet</p>'
    body = frame.to_html(index=False, classes="data", border=0, na_rep="–", float_format=_fmt)
    return f'<div class="scroll">{body}</div>'


def _img(png: bytes, alt: str) -> str:
    data = base64.b64encode(png).decode("ascii")
    return f'<img alt="{_esc(alt)}" src="data:image/png;base64,{data}">'


def _slug(text: str) -> str:
    return "".join(c if c.isalnum() else "-" for c in text.lower())


class _Campaign:
    """What the report needs from the campaign file stored with the runs."""

    def __init__(self, path: str, text: str) -> None:
        self.path = path
        self.text = text
        try:
            data = tomllib.loads(text)
        except tomllib.TOMLDecodeError:
            data = {}
        # Keys set with `mptcplab run --set` travel as comments after the file's text; if a
        # hand-edited store's comments no longer apply, the file's own keys are what is left.
        with contextlib.suppress(UserError):
            data = overrides.apply(data, overrides.stored(text), path)
        self.name = str(data.get("name", "campaign"))
        self.description = str(data.get("description", ""))
        # dict.fromkeys: a store written before repeats were refused may list a metric twice.
        wanted = dict.fromkeys(data.get("metrics", ["goodput_mbps"]))
        self.metrics = [m for m in wanted if is_metric_name(m)]
        self.published, self.unreadable = _published_entries(data.get("published", []))
        factors = data.get("factors", {})
        self.log_factors = [n for n, f in factors.items() if isinstance(f, dict) and f.get("log")]


def _stored_campaign(store: Store, store_path: str | Path) -> _Campaign:
    """The campaign file kept with the latest runner invocation of the store."""
    stored = store.campaign_text()
    if stored is None:
        raise UserError("the store holds no campaign run yet", file=str(store_path))
    return _Campaign(*stored)


def _published_entries(raw: Any) -> tuple[list[PublishedSpec], int]:
    """The campaign's published figures; entries this version cannot read (a store written by
    another version) are counted, not shown."""
    entries: list[PublishedSpec] = []
    unreadable = 0
    for item in raw if isinstance(raw, list) else []:
        try:
            entries.append(PublishedSpec.model_validate(item))
        except ValidationError:
            unreadable += 1
    return entries, unreadable


def _published_section(runs: pd.DataFrame, campaign: _Campaign) -> str:
    parts = [
        "<p>Each figure of the campaign's <code>[[published]]</code> entries beside the median "
        "of our finished runs at the settings it was measured at, with the smallest and largest "
        "of those runs and the difference ours − published (relative to the published value). "
        "A figure stated relative to other settings is a ratio: ours is then each run divided "
        "by the median of the runs at those settings. "
        "Agreement, where an entry gives a tolerance, means |ours − published| ≤ tolerance.</p>",
        _table(display_table(compare_published(runs, campaign.published))),
    ]
    if campaign.unreadable:
        parts.append(
            f'<p class="note">{campaign.unreadable} published entries of the stored campaign '
            "file could not be read by this version and are left out</p>"
        )
    return "".join(parts)


def _latency_section(store: Store, runs: pd.DataFrame) -> str | None:
    """Every block's latency pooled per variant, when the runs traced their blocks."""
    latencies = block_latencies(store, runs)
    if not latencies:
        return None
    return (
        "<p>The latency of every application block completed after the warm-up, from the time "
        "the application wrote it to the time the receiving application had read all of it, "
        "pooled over the finished runs of each variant (NSDI 2012, Fig. 7, plots its "
        "distribution). The runs' <code>block_latency_*</code> metrics summarise each run "
        "(nearest-rank percentiles, as the simulator reports them); this is the blocks "
        "themselves, their percentiles interpolated linearly between neighbouring blocks.</p>"
        + _table(latency_table(latencies))
        # Blocks all completed in the warm-up leave nothing to draw.
        + (
            _img(plots.latency_cdf(latencies, _facets(runs, latencies)), "block latency CDF")
            if any(values.size for values in latencies.values())
            else ""
        )
    )


def _windows_section(store: Store, runs: pd.DataFrame, variants: list[str]) -> str | None:
    """Every subflow's window over time, when the runs traced windows at one point per variant."""
    traces = window_traces(store, runs)
    if traces is None:
        return None
    return (
        "<p>The congestion window of every subflow over time, in segments of "
        f"{MSS_BYTES} bytes: at each trace sample, the median over the finished runs of each "
        "variant (and over the users of a flow entry with a count). Dotted lines mark flows "
        "that start late or stop writing.</p>"
        + _img(plots.window_timeline(traces, variants), "congestion windows over time")
    )


def _facets(runs: pd.DataFrame, variants: Iterable[str]) -> dict[str, tuple[str, str]]:
    """(panel, line) of each variant: with two or more qualitative factors, one panel per level
    of the first and one line per combination of the others, so that lines stay few enough to
    tell apart; with one, a single panel."""
    levels = list(runs.attrs.get("levels", []))
    rows = runs.drop_duplicates("variant").set_index("variant")
    out = {}
    for variant in variants:
        if len(levels) < 2 or variant not in rows.index:
            out[variant] = ("", variant)
            continue
        row = rows.loc[variant]
        rest = ", ".join(f"{name}={row[name]}" for name in levels[1:])
        out[variant] = (f"{levels[0]}={row[levels[0]]}", rest)
    return out


def _status_badges(counts: dict[str, int], references: int, flagged: int = 0) -> str:
    parts = [
        f"<span>{counts['planned']} runs planned</span>",
        f'<span class="ok">{counts["done"]} done</span>',
        f'<span class="bad">{counts["failed"]} failed</span>',
        f'<span class="wait">{counts["pending"]} pending</span>',
    ]
    if references:
        parts.append(f"<span>{references} of them single-path TCP references</span>")
    if flagged:
        # Counted and plotted with the rest; the cross-validation section leaves them out.
        parts.append(
            f'<span class="wait">{flagged} of the runs done flagged: the emulator, not the '
            "network, was their bottleneck</span>"
        )
    return f'<div class="badges">{"".join(parts)}</div>'


def _stale_metrics_note(store: Store, campaign_path: str, done: int) -> str:
    if not done or store.meta("metrics_fingerprint") == metrics_fingerprint():
        return ""
    return (
        '<p class="note">The stored metrics were computed by other metric code than this '
        "mptcplab's (an older or newer version): <code>mptcplab run "
        f"{_esc(campaign_path)}</code> recomputes them from the stored reports.</p>"
    )


def _alike_note(runs: pd.DataFrame, metrics: Sequence[str]) -> str:
    alike, repeated = alike_replications(runs, metrics)
    if not alike:
        return ""
    return (
        f'<p class="note">At {alike} of the {repeated} design points and variants run more than '
        "once, every replication gave the same value of every metric: nothing random in those "
        "scenarios mattered (no random loss, RED, jitter or simultaneous starts draws anything "
        "there), so their medians are one run's values and one replication would give the "
        "same figures.</p>"
    )


_QUALITY_COLUMNS = (
    "n", "d", "mindist", "phi_p", "coverage", "mesh_ratio", "mst_mean", "mst_std", "cd2", "wd2",
    "l2_star", "mindist_2d_worst",
)  # fmt: skip


def _design_section(store: Store) -> str:
    rows = []
    for design in store.designs():
        points = design["unit_points"]
        dims = len(design["factor_names"])
        row: dict[str, Any] = {"design": design["design"], "kind": design["kind"]}
        if dims == 0:
            row["kind"] = "none: qualitative factors only"
        if len(points) >= 2 and dims >= 1:
            q = quality(points, projections=dims >= 2)
            row.update({key: q[key] for key in _QUALITY_COLUMNS if key in q})
        else:
            row["n"] = len(points)
        rows.append(row)
    table = pd.DataFrame.from_records(rows)
    if "mindist" not in table:
        return _table(table)
    note = (
        '<p class="note">Measures in the unit cube of the points as run, integer factors '
        "rounded (spec §4.5): larger <code>mindist</code> and "
        "<code>mst_mean</code> are better; smaller <code>phi_p</code>, <code>coverage</code>, "
        "<code>mst_std</code> and discrepancies (<code>cd2</code>, <code>wd2</code>, "
        "<code>l2_star</code>) are better; <code>mindist_2d_worst</code> is the smallest "
        "minimum distance over all two-factor projections.</p>"
    )
    return _table(table) + note


#: Why a campaign with qualitative factors has no comparison of a metric.
NOTHING_COMPARED = (
    "no two levels of a qualitative factor have finished runs with a value of it at a common "
    "point (the runs of the others failed or have none), so nothing is compared"
)


def _metric_section(
    runs: pd.DataFrame,
    medians: pd.DataFrame,
    metric: str,
    campaign: _Campaign,
    variants: Sequence[str],
) -> str:
    info = metric_info(metric)
    parts = [f'<h2 id="metric-{_slug(metric)}">{_esc(metric)}</h2>']
    unit = f" ({_esc(info.unit)})" if info.unit else ""
    parts.append(f'<p class="lead">{_esc(info.description)}{unit}; medians over replications.</p>')
    if medians[metric].dropna().empty:
        parts.append('<p class="note">no finished run gives this metric</p>')
        return "".join(parts)
    if info.bounds is not None:
        low, high = info.bounds
        outside = int(((medians[metric] < low) | (medians[metric] > high)).sum())
        if outside:
            parts.append(
                f'<p class="note">{outside} point medians lie outside the theoretical range '
                f"[{low:g}, {high:g}] (a goodput counts data read in the measured window that "
                "reached the receiver before the warm-up ended; with measured references, the "
                "MPTCP run may also beat the sum of its single-path runs); they are shown as "
                "measured, not clipped.</p>"
            )
    unfinished = unfinished_count(medians[metric])
    if unfinished:
        parts.append(
            f'<p class="note">{unfinished} point median{"s are" if unfinished > 1 else " is"} '
            f"infinite: {_esc(info.unfinished)} in half of the point's replications or more. "
            "The tables and comparisons count an infinite median as longer than any finite one, "
            "as it is, and the heat map writes ∞ in a cell it makes infinite; the other "
            "figures, which need magnitudes, leave it out (the CDF of differences counts it "
            "among the points, off the axis).</p>"
        )
    stalled = stalled_count(medians[metric])
    if stalled:
        parts.append(
            f'<p class="note">{stalled} point median{"s are" if stalled > 1 else " is"} −∞: '
            f"{_esc(info.stalled)} in half of the point's replications or more. The tables and "
            "comparisons count such a median as worse than any finite one, and the heat map "
            "writes −∞ in a cell it makes so; the other figures, which need magnitudes, leave "
            "it out (the CDF of differences counts it among the points, off the axis).</p>"
        )
    # Plots and the heat map draw magnitudes; the tables keep every point.
    drawn = medians[medians[metric].abs() != math.inf]
    parts.append("<h3>Percentiles of the per-point medians, by variant</h3>")
    # Every variant, those whose runs all failed with 0 points.
    parts.append(_table(percentile_table(medians, metric, levels=variants)))
    for level in medians.attrs.get("levels", []):
        if medians[level].nunique() > 1 and len(medians.attrs.get("levels", [])) > 1:
            parts.append(f"<h3>… by {_esc(level)}</h3>")
            every_level = list(dict.fromkeys(runs[level]))
            parts.append(_table(percentile_table(medians, metric, by=level, levels=every_level)))
    compared = compare_variants(medians, metric, higher_is_better=info.higher_is_better, runs=runs)
    if compared.empty and compared.attrs.get("levels"):
        parts.append(f'<p class="note">{_esc(NOTHING_COMPARED)}.</p>')
    if not compared.empty:
        parts.append("<h3>Variants compared point by point</h3>")
        parts.append(
            '<p class="note">Each row pairs two levels of one factor, the other factors\' levels '
            "held fixed (<em>with</em>), over the design points where both have a median: the "
            "variants ran at the same points with the same seeds. <em>median difference</em> is "
            "that of b − a over those points, with its distribution-free 95 % interval (order "
            "statistics, as the sign test's); <em>b higher share</em> the share of points where b"
            " is higher, ties counted half; <em>p</em> the two-sided sign test (the interval "
            "excludes 0 where it is below 0.05), <em>p adjusted</em> the same after "
            "Benjamini–Hochberg over this table's rows. The verdict names a difference where the "
            "adjusted p is below 0.05. Where two variants share a single point (<em>basis</em> "
            "counts runs, not points), there is nothing to pair: their replications there are "
            "compared as two samples, by the rank-sum test, the Hodges–Lehmann shift (the median "
            "of the differences of all pairs of runs) and its interval; <em>b higher share</em> "
            "is then the share of those pairs where b is higher. When every replication of both, "
            "two or more each, gave one value (<em>all alike</em>: nothing random in the scenario "
            "mattered there), "
            "they are one observation each, not samples: the difference is exact and untested. "
            "The figure below draws, for "
            "every pair compared over six points or more, the distribution of its per-point "
            "differences.</p>"
        )
        shown = compared.rename(columns=lambda c: c.replace("_", " "))
        parts.append(_table(shown))
        # The distribution whose median the table tests, where there are points enough for an
        # interval (CoNEXT 2013 reports that of T_A − T_F in its slow-start study).
        differences = [
            (label, d) for label, d in paired_differences(medians, metric) if d.size >= _MIN_PAIRED
        ]
        # A pair whose every difference is infinite (a level that never finished) has no curve.
        if any(np.isfinite(d).any() for _, d in differences):
            png = plots.difference_cdf(differences, metric, info.unit)
            parts.append(_img(png, f"{metric}: per-point differences between levels"))
    parts.append("<h3>Distribution</h3>")
    if drawn[metric].dropna().empty:
        parts.append('<p class="note">no finite value to draw</p>')
        return "".join(parts)
    parts.append(_img(plots.distribution(drawn, metric, info.unit, variants), f"{metric} CDF"))
    factors = medians.attrs.get("factors", [])
    if factors:
        parts.append("<h3>Against each factor</h3>")
        png = plots.against_factors(
            drawn, metric, info.unit, factors, campaign.log_factors, variants
        )
        parts.append(_img(png, f"{metric} against factors"))
        # A variant whose runs all failed has no point to draw (heat_grid refuses it as unknown).
        # Infinite medians count in their cells, as in the tables.
        valued = medians.dropna(subset=[metric])
        present = set(valued["variant"])
        grid = heat_grid(valued, metric, factors, [v for v in variants if v in present])
        if grid is not None:
            parts.append(f"<h3>Heat map over {_esc(grid.x)} and {_esc(grid.y)}</h3>")
            chosen = (
                f"The pair of factors that explains most of <code>{_esc(metric)}</code> within "
                f"each variant (adjusted η² {grid.explained:.2f} over the cells)"
                if math.isfinite(grid.explained)
                else "The design's two quantitative factors"
            )
            parts.append(
                f'<p class="note">{chosen}: each factor\'s range is cut into bins holding about '
                "equal numbers of points (a factor that takes a few values, each several "
                "times, gets one cell per value), and each cell shows the median of the point "
                "medians in it (∞ where the infinite ones make it so); grey cells without a "
                "number hold no point.</p>"
            )
            png = plots.heat_map(grid, info.unit, info.higher_is_better)
            parts.append(_img(png, f"{metric} over {grid.x} and {grid.y}"))
    return "".join(parts)


def _critical_counts(ratios: pd.Series) -> dict[str, int]:
    found = ratios.map(critical_class)
    counts = {"MPTCP < 97.5 % of TCP": int(found.notna().sum())}
    for n, name in enumerate(CRITICAL_CLASSES):
        counts["of which " + name if n == 0 else name] = int((found == name).sum())
    return counts


def _critical_section(medians: pd.DataFrame, metrics: Sequence[str]) -> str:
    if all(medians[m].dropna().empty for m in metrics):
        return '<p class="note">no finished runs yet</p>'
    # A split of traffic (path0_share) has no worse end to rank points by.
    metric = next(
        (
            m
            for m in metrics
            if metric_info(m).higher_is_better is not None and not medians[m].dropna().empty
        ),
        None,
    )
    if metric is None:
        return (
            '<p class="note">none of the metrics has a better or worse end to rank the points '
            "by</p>"
        )
    info = metric_info(metric)
    ranked = medians.dropna(subset=[metric]).sort_values(
        metric, ascending=info.higher_is_better, kind="stable"
    )
    columns = [
        "variant",
        "design",
        "point",
        *medians.attrs.get("factors", []),
        *metrics,
        "replications",
    ]
    worst = ranked.head(WORST_POINTS)[[c for c in dict.fromkeys(columns) if c in ranked]]
    direction = "lowest" if info.higher_is_better else "highest"
    # Each row is a point of one variant: a point can appear once for each.
    several = "variant" in worst and medians["variant"].nunique() > 1
    rows = (
        ("pair of design point and variant", "pairs of design point and variant")
        if several
        else ("design point", "design points")
    )
    parts = [
        f'<p class="lead">The {len(worst)} {rows[len(worst) != 1]} with the {direction} median '
        f"<code>{_esc(metric)}</code>, with their factor values.</p>",
        _table(worst),
    ]
    if "log_gain" in medians and not medians["log_gain"].dropna().empty:
        ratio = medians["log_gain"].dropna().map(math.exp)
        classes = pd.DataFrame.from_records(
            [
                {"variant": variant, "points": int(r.size)} | _critical_counts(r)
                for variant, r in ratio.groupby(medians["variant"], sort=False)
            ]
        )
        parts.append("<h3>Points where MPTCP does worse than the best single-path TCP</h3>")
        parts.append(_table(classes))
    return "".join(parts)


def _sensitivity_section(medians: pd.DataFrame, metrics: Sequence[str]) -> str | None:
    if medians.empty or medians["design"].nunique() < 2:
        return None
    parts = [
        '<p class="lead">Standard deviation of each percentile of the per-point medians across '
        "the independent designs, relative to the metric's observed range (CoNEXT 2013, "
        "spec §4.6). Small values: the conclusions do not depend on the design.</p>"
    ]
    for metric in metrics:
        infinite = unfinished_count(medians[metric]) + stalled_count(medians[metric])
        if infinite:
            # A standard deviation over infinite medians has no value.
            parts.append(f"<h3>{_esc(metric)}</h3>")
            parts.append(
                f'<p class="note">not measured: {infinite} point '
                f"median{'s are' if infinite > 1 else ' is'} infinite (see above)</p>"
            )
            continue
        table = sensitivity_table(medians, metric)
        if table is not None:
            parts.append(f"<h3>{_esc(metric)}</h3>")
            parts.append(_table(table))
    return "".join(parts)


def _failures_section(runs: pd.DataFrame) -> str | None:
    failed = runs[runs["status"] == "failed"] if not runs.empty else runs
    if failed.empty:
        return None
    columns = [
        "variant",
        "design",
        "point",
        "replication",
        *runs.attrs.get("factors", []),
        "attempts",
        "error",
    ]
    table = failed[[c for c in columns if c in failed]].head(20)
    return (
        f'<p class="lead">{len(failed)} runs failed; re-running the campaign retries them.</p>'
        + _table(table)
    )


def _short_revision(revision: str | None) -> str:
    if not revision:
        return "–"
    commit, plus, flag = revision.partition("+")
    return commit[:12] + plus + flag


def _provenance_section(store: Store) -> str:
    rows = [
        {
            "run": p["id"],
            "started": p["started_at"],
            "ended": p["ended_at"] or "(interrupted)",
            "mptcplab": p["mptcplab_version"],
            "git revision": _short_revision(p["git_revision"]),
            "backend": f"{p['backend']}: {p['backend_version']}",
            "host": p["host"],
            "executor": f"{p['executor']} × {p['jobs']}",
            "completed": p["completed_runs"],
            "failed": p["failed_runs"],
        }
        for p in store.provenance()
    ]
    return _table(pd.DataFrame.from_records(rows))


def _backends_section(runs: pd.DataFrame, store: Store) -> str | None:
    from mptcplab.analysis import crossval

    table = crossval.backend_table(runs, store)
    if table is None:
        return None
    backends = table.attrs["backends"]
    lead = (
        f'<p class="lead">Every point ran on {", ".join(backends)} with the same scenario and '
        f"seed; ratios are to <code>{_esc(backends[0])}</code> (per-point medians of "
        f"<code>goodput_mbps</code>). Points where an emulator run was limited by the emulator "
        f"itself (fidelity check) are marked and left out of the summary; a point is off when "
        f"its ratio lies outside 1 ± {crossval.DISAGREEMENT:.0%}.</p>"
    )
    off = crossval.disagreements(table)
    return "".join(
        [
            lead,
            _table(crossval.summary(table)),
            _img(crossval.scatter(table), "backends compared"),
            f"<h3>Points off by more than {crossval.DISAGREEMENT:.0%}</h3>",
            _table(off),
            "<h3>Every point</h3>",
            _table(table),
        ]
    )


def _document(title: str, sections: Iterable[tuple[str, str, str]], header: str) -> str:
    sections = list(sections)
    nav = "".join(f'<a href="#{sid}">{_esc(name)}</a>' for sid, name, _ in sections)
    body = "".join(
        f'<h2 id="{sid}">{_esc(name)}</h2>{content}' if not content.startswith("<h2") else content
        for sid, name, content in sections
    )
    return (
        '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
        f'<meta name="viewport" content="width=device-width, initial-scale=1">'
        f"<title>{_esc(title)}</title><style>{_CSS}</style></head><body><main>"
        f"{header}<nav>{nav}</nav>{body}</main></body></html>\n"
    )


ReportProgress = Callable[[str, int, int], None]
"""Called as ``progress(section title, sections done, sections in all)`` before each section."""


def build_report(store_path: str | Path, *, progress: ReportProgress | None = None) -> str:
    """The HTML text of the report of the campaign stored at ``store_path``; ``progress``, when
    given, hears of each section as it is built (the plots of a large campaign take a while)."""
    with Store(store_path) as store:
        campaign = _stored_campaign(store, store_path)
        # A stored plan always holds at least one run (one point, variant and replication).
        every_run = to_pandas(store, references=True)
        is_reference = every_run["role"] == "reference"
        references = every_run.loc[is_reference, "run_key"].nunique()
        runs = every_run[~is_reference]
        runs.attrs = dict(every_run.attrs)
        metrics = campaign.metrics or ["goodput_mbps"]
        counts = store.counts()
        medians = point_medians(runs, metrics)
        variants = list(dict.fromkeys(runs["variant"]))

        header = (
            f"<h1>{_esc(campaign.name)}</h1>"
            + (f'<p class="lead">{_esc(campaign.description)}</p>' if campaign.description else "")
            + f'<p class="note">store <code>{_esc(store_path)}</code> · campaign file '
            f"<code>{_esc(campaign.path)}</code></p>"
            + _status_badges(counts, references, len(store.emulation_bottlenecked()))
            + _alike_note(runs, metrics)
            + _stale_metrics_note(store, campaign.path, counts["done"])
        )
        # (id, title, builder): a builder returns the section's HTML, or None when the campaign
        # has nothing for it.
        builders: list[tuple[str, str, Callable[[], str | None]]] = [
            ("campaign", "Campaign", lambda: f'<pre class="toml">{_esc(campaign.text)}</pre>'),
        ]
        if campaign.published or campaign.unreadable:
            builders.append(
                (
                    "published",
                    "Published results beside ours",
                    lambda: _published_section(runs, campaign),
                )
            )
        builders.append(("design", "Design quality", lambda: _design_section(store)))
        for metric in metrics:
            builders.append(
                (
                    f"metric-{_slug(metric)}",
                    metric,
                    lambda metric=metric: _metric_section(
                        runs, medians, metric, campaign, variants
                    ),
                )
            )
        builders += [
            ("latency", "Application latency", lambda: _latency_section(store, runs)),
            (
                "windows",
                "Congestion windows over time",
                lambda: _windows_section(store, runs, variants),
            ),
            ("critical", "Critical configurations", lambda: _critical_section(medians, metrics)),
            ("backends", "Backends compared", lambda: _backends_section(runs, store)),
            (
                "sensitivity",
                "Sensitivity to the design",
                lambda: _sensitivity_section(medians, metrics),
            ),
            ("failures", "Failed runs", lambda: _failures_section(runs)),
            ("provenance", "Provenance", lambda: _provenance_section(store)),
        ]
        sections: list[tuple[str, str, str]] = []
        for done, (anchor, title, build) in enumerate(builders):
            if progress is not None:
                progress(title, done, len(builders))
            html_text = build()
            if html_text is not None:
                sections.append((anchor, title, html_text))
        if progress is not None:
            progress("writing", len(builders), len(builders))
    return _document(f"{campaign.name} — mptcplab report", sections, header)


def variant_comparisons(
    store_path: str | Path, metrics: Sequence[str] | None = None
) -> dict[str, pd.DataFrame]:
    """For each of ``metrics`` (default: the stored campaign's), its variants compared point by
    point (:func:`compare_variants`), as the report shows them."""
    with Store(store_path) as store:
        campaign = _stored_campaign(store, store_path)
        runs = to_pandas(store)
    chosen = list(dict.fromkeys(metrics if metrics else campaign.metrics or ["goodput_mbps"]))
    medians = point_medians(runs, chosen)
    return {
        m: compare_variants(medians, m, higher_is_better=metric_info(m).higher_is_better, runs=runs)
        for m in chosen
    }


def published_comparison(store_path: str | Path) -> pd.DataFrame | None:
    """The stored campaign's published figures beside its runs (:func:`compare_published`), or
    None when the campaign gives none."""
    with Store(store_path) as store:
        campaign = _stored_campaign(store, store_path)
        if not campaign.published:
            return None
        return compare_published(to_pandas(store), campaign.published)


def write_report(
    store_path: str | Path, out: str | Path, *, progress: ReportProgress | None = None
) -> Path:
    out = Path(out)
    text = build_report(store_path, progress=progress)
    with writing(out, "the report"):
        out.write_text(text, encoding="utf-8")
    return out

"""Plots of a campaign's per-point medians, rendered to PNG bytes.

Figures are built with ``matplotlib.figure.Figure`` (no pyplot state, no GUI backend), so they
can be drawn in worker threads and embedded in the HTML report. Every variant keeps one colour
across all figures.
"""

from __future__ import annotations

import io
import math
from collections.abc import Mapping, Sequence
from typing import Any

import matplotlib
import numpy as np
import pandas as pd
from matplotlib.axes import Axes
from matplotlib.colors import CenteredNorm, Normalize, to_hex
from matplotlib.figure import Figure

from mptcplab.analysis._checks import listed, require_columns
from mptcplab.analysis.heatmap import HeatGrid
from mptcplab.analysis.latency import latency_values
from mptcplab.analysis.windows import WindowTraces

_PALETTE = (
    "#1f77b4",
    "#d62728",
    "#2ca02c",
    "#ff7f0e",
    "#9467bd",
    "#8c564b",
    "#e377c2",
    "#17becf",
    "#7f7f7f",
    "#bcbd22",
)
_DPI = 110
# Matplotlib 3.10 replaced boxplot's `vert` by `orientation`.
_HORIZONTAL: dict[str, Any] = (
    {"orientation": "horizontal"}
    if tuple(int(p) for p in matplotlib.__version__.split(".")[:2]) >= (3, 10)
    else {"vert": False}
)


def colours(variants: Sequence[str]) -> dict[str, str]:
    """A colour for each variant, all different: the palette's ten, or for more variants as
    many hues spread over a perceptually ordered colour map."""
    if len(variants) <= len(_PALETTE):
        return dict(zip(variants, _PALETTE, strict=False))
    cmap = matplotlib.colormaps["turbo"]
    n = len(variants)
    return {v: to_hex(cmap(0.05 + 0.9 * i / (n - 1))) for i, v in enumerate(variants)}


def to_png(fig: Figure) -> bytes:
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png", dpi=_DPI, bbox_inches="tight")
    return buffer.getvalue()


def _text(name: object) -> str:
    """A name the user gave (variant, level, factor, flow) as matplotlib draws it literally:
    between two dollar signs it would read mathtext (``$\\frac$`` stops the figure)."""
    return str(name).replace("$", r"\$")


def _label(metric: str, unit: str) -> str:
    return _text(f"{metric} ({unit})" if unit else metric)


def _style(ax: Axes) -> None:
    ax.grid(True, color="#dddddd", linewidth=0.6)
    ax.set_axisbelow(True)
    for side in ("top", "right"):
        ax.spines[side].set_visible(False)


def distribution(medians: pd.DataFrame, metric: str, unit: str, variants: Sequence[str]) -> bytes:
    """Empirical CDF (left) and box plot (right) of a metric's per-point medians per variant;
    some variant must have a value."""
    variants = listed(variants, "variants", "variant labels")
    require_columns(medians.columns, ["variant"], "medians", "medians")
    require_columns(medians.columns, [metric], "metric", "medians")
    palette = colours(variants)
    fig = Figure(figsize=(11, 3.8), layout="constrained")
    cdf, box = fig.subplots(1, 2, gridspec_kw={"width_ratios": [1.4, 1]})
    samples = []
    for variant in variants:
        values = np.sort(medians.loc[medians["variant"] == variant, metric].dropna().to_numpy())
        samples.append(values)
        if values.size:
            # Start at (first value, 0) so that the first step, and a single point, show.
            x = np.concatenate([values[:1], values])
            y = np.arange(0, values.size + 1) / values.size
            cdf.step(
                x, y, where="post", color=palette[variant], label=_text(variant), linewidth=1.6
            )
    if not any(s.size for s in samples):
        raise ValueError(f"medians: no value of {metric!r} in any of the variants {variants}")
    cdf.set_xlabel(_label(metric, unit))
    cdf.set_ylabel("fraction of points")
    cdf.set_ylim(0, 1.02)
    cdf.set_title("CDF over design points", fontsize=10)
    cdf.legend(fontsize=8, loc="best", frameon=False)
    _style(cdf)
    shown = [i for i, s in enumerate(samples) if s.size]
    if shown:
        parts = box.boxplot(
            [samples[i] for i in shown],
            **_HORIZONTAL,
            patch_artist=True,
            widths=0.6,
            medianprops={"color": "black"},
            flierprops={"markersize": 3},
        )
        for patch, i in zip(parts["boxes"], shown, strict=True):
            patch.set_facecolor(palette[variants[i]])
            patch.set_alpha(0.55)
        box.set_yticks(range(1, len(shown) + 1), [_text(variants[i]) for i in shown], fontsize=8)
        box.invert_yaxis()
    box.set_xlabel(_label(metric, unit))
    box.set_title("box plot (whiskers 1.5 IQR)", fontsize=10)
    _style(box)
    return to_png(fig)


def difference_steps(
    given: Sequence[float] | np.ndarray,
) -> tuple[np.ndarray, np.ndarray, int] | None:
    """The steps of the empirical CDF of per-point differences: x and y for ``step(where=
    "post")`` and how many differences are infinite, or None without a finite one. Every
    difference counts among the points, an infinite one off the axis: y starts at the share of
    −∞ and ends below 1 by that of +∞. NaN (no difference) is left out."""
    values = np.asarray(given, dtype=float)
    values = values[~np.isnan(values)]
    ordered = np.sort(values[np.isfinite(values)])
    if ordered.size == 0:
        return None
    below = int((values == -np.inf).sum())
    x = np.concatenate([ordered[:1], ordered])
    y = (below + np.arange(0, ordered.size + 1)) / values.size
    return x, y, values.size - ordered.size


def difference_cdf(differences: Sequence[tuple[str, np.ndarray]], metric: str, unit: str) -> bytes:
    """Empirical CDF of the per-point differences b − a (arrays or lists) of each compared pair
    of levels, with zero marked: where a curve crosses it is the share of points where b is
    lower. An infinite difference (one level never finished there) counts among the points
    (:func:`difference_steps`), and the legend says how many. Some pair must have a finite
    difference."""
    fig = Figure(figsize=(7.5, 3.6), layout="constrained")
    ax = fig.subplots()
    drawn = 0
    pairs = listed(differences, "differences", "(label, values)")
    palette = list(colours([str(i) for i in range(len(pairs))]).values())
    for i, (label, given) in enumerate(pairs):
        steps = difference_steps(given)
        if steps is None:
            continue
        drawn += 1
        x, y, infinite = steps
        if infinite:
            label = f"{label} ({infinite} of {x.size - 1 + infinite} infinite)"
        ax.step(x, y, where="post", color=palette[i], label=_text(label), linewidth=1.6)
    if not drawn:
        raise ValueError("differences: no pair has a finite difference to draw")
    ax.axvline(0.0, color="black", linewidth=0.8)
    ax.set_xlabel(f"difference b − a of {_label(metric, unit)}")
    ax.set_ylabel("fraction of points")
    ax.set_ylim(0, 1.02)
    ax.set_title("per-point differences between levels", fontsize=10)
    ax.legend(fontsize=8, loc="best", frameon=False)
    _style(ax)
    return to_png(fig)


def against_factors(
    medians: pd.DataFrame,
    metric: str,
    unit: str,
    factors: Sequence[str],
    log_factors: Sequence[str],
    variants: Sequence[str],
) -> bytes:
    """The metric against each quantitative factor (at least one), one panel per factor,
    coloured by variant."""
    factors = listed(factors, "factors", "factor names")
    variants = listed(variants, "variants", "variant labels")
    if not factors:
        raise ValueError("factors: expected at least one factor to draw the metric against")
    require_columns(medians.columns, ["variant"], "medians", "medians")
    require_columns(medians.columns, [metric], "metric", "medians")
    require_columns(medians.columns, factors, "factors", "medians")
    palette = colours(variants)
    ncols = min(3, max(1, len(factors)))
    nrows = math.ceil(len(factors) / ncols)
    fig = Figure(figsize=(3.9 * ncols, 3.0 * nrows + 0.5))
    axes = np.atleast_1d(fig.subplots(nrows, ncols, squeeze=False)).ravel()
    for ax, factor in zip(axes, factors, strict=False):
        for variant in variants:
            part = medians[medians["variant"] == variant]
            ax.scatter(
                part[factor],
                part[metric],
                s=11,
                alpha=0.75,
                color=palette[variant],
                label=_text(variant),
                linewidths=0,
            )
        if factor in log_factors:
            ax.set_xscale("log")
        ax.set_xlabel(_text(factor))
        ax.set_ylabel(_label(metric, unit), fontsize=8)
        _style(ax)
    for ax in axes[len(factors) :]:
        ax.set_visible(False)
    handles, labels = axes[0].get_legend_handles_labels()
    if handles:
        fig.legend(
            handles,
            labels,
            loc="upper center",
            ncol=min(len(labels), 4),
            frameon=False,
            fontsize=8,
            markerscale=2,
            bbox_to_anchor=(0.5, 1.0),
        )
    fig.tight_layout(rect=(0, 0, 1, 1 - 0.4 / (3.0 * nrows + 0.5)))
    return to_png(fig)


def _cell_text(value: float, span: float) -> str:
    """A cell's value to the precision the colour scale can tell apart (about 1 % of its span),
    so that -0.000955 next to 0.957 reads -0.00."""
    decimals = max(0, 2 - math.floor(math.log10(span))) if span > 0 else 3
    return f"{value:.{decimals}f}"


def heat_map(grid: HeatGrid, unit: str, higher_is_better: bool | None) -> bytes:
    """One panel per variant on a shared colour scale; each cell shows its median. Values on
    both sides of zero (log gain, aggregation benefit) get a scale centred on zero and
    symmetric about it, so that a cell's shade says how far it is from zero either way. A cell
    whose median is infinite has no shade: it is written ∞ (or −∞) on the grey of an empty
    cell. Variants without a value are left out; some variant must have one."""
    shown = [v for v, g in grid.values.items() if (~np.isnan(g)).any()]
    if not shown:
        raise ValueError(f"grid: no variant has a value of {grid.metric!r} in any cell")
    every = np.concatenate([grid.values[v][np.isfinite(grid.values[v])] for v in shown])
    low, high = (float(every.min()), float(every.max())) if every.size else (0.0, 1.0)
    norm: Normalize
    if low < 0 < high:
        norm = CenteredNorm(vcenter=0.0, halfrange=max(-low, high))
        cmap = "RdBu_r" if higher_is_better is False else "RdBu"
    else:
        norm = Normalize(vmin=low, vmax=high if high > low else low + 1.0)
        cmap = "viridis_r" if higher_is_better is False else "viridis"
    ncols = min(3, math.ceil(math.sqrt(len(shown))))
    nrows = math.ceil(len(shown) / ncols)
    width = 0.6 * len(grid.x_labels) + 1.6
    height = 0.42 * len(grid.y_labels) + 1.4
    fig = Figure(figsize=(width * ncols + 1.2, height * nrows + 0.3), layout="constrained")
    axes = np.atleast_1d(fig.subplots(nrows, ncols, squeeze=False)).ravel()
    mesh = None
    for ax, variant in zip(axes, shown, strict=False):
        values = grid.values[variant]
        mesh = ax.pcolormesh(np.ma.masked_invalid(values), cmap=cmap, norm=norm)
        for (row, col), value in np.ndenumerate(values):
            if math.isinf(value):
                text = "∞" if value > 0 else "−∞"
                ax.text(col + 0.5, row + 0.5, text, ha="center", va="center", fontsize=8)
            elif math.isfinite(value):
                red, green, blue, _ = mesh.cmap(norm(value))
                dark = 0.299 * red + 0.587 * green + 0.114 * blue < 0.5
                ax.text(
                    col + 0.5,
                    row + 0.5,
                    _cell_text(value, high - low),
                    ha="center",
                    va="center",
                    fontsize=6.5,
                    color="white" if dark else "black",
                )
        ax.set_xticks(
            np.arange(len(grid.x_labels)) + 0.5,
            [_text(label) for label in grid.x_labels],
            rotation=45,
            ha="right",
        )
        ax.set_yticks(
            np.arange(len(grid.y_labels)) + 0.5, [_text(label) for label in grid.y_labels]
        )
        ax.tick_params(labelsize=7, length=0)
        ax.set_xlabel(_text(grid.x), fontsize=8)
        ax.set_ylabel(_text(grid.y), fontsize=8)
        ax.set_title(_text(variant), fontsize=9)
        ax.set_facecolor("#e6e6e6")  # cells no point fell into
    for ax in axes[len(shown) :]:
        ax.set_visible(False)
    if mesh is not None:
        bar = fig.colorbar(mesh, ax=axes[: len(shown)].tolist(), shrink=0.9)
        bar.set_label(_label(grid.metric, unit), fontsize=8)
        bar.ax.tick_params(labelsize=7)
    return to_png(fig)


def latency_cdf(
    latencies: Mapping[str, np.ndarray | Sequence[float]], facets: Mapping[str, tuple[str, str]]
) -> bytes:
    """Empirical CDF of every block's latency (NSDI 2012 Fig. 7 plots their distribution): one
    panel per ``facets[variant][0]``, one line per ``facets[variant][1]`` (same colour in every
    panel); a log time axis when the latencies span more than a factor of 20. Latencies are
    arrays or lists (ms); some variant must have one."""
    latencies = {v: latency_values(x, f"latencies[{v!r}]") for v, x in latencies.items()}
    if not any(values.size for values in latencies.values()):
        raise ValueError("latencies: expected the block latencies of a variant at least, got none")
    for variant in latencies:
        if variant not in facets:
            raise ValueError(f"facets: expected a (panel, line) for variant {variant!r}")
    panels = list(dict.fromkeys(facets[v][0] for v in latencies))
    lines = list(dict.fromkeys(facets[v][1] for v in latencies))
    palette = colours(lines)
    ncols = min(2, len(panels))
    nrows = math.ceil(len(panels) / ncols)
    fig = Figure(figsize=(6.2 * ncols, 3.4 * nrows + 0.4), layout="constrained")
    axes = np.atleast_1d(fig.subplots(nrows, ncols, squeeze=False, sharex=True)).ravel()
    positive = [v[v > 0] for v in latencies.values() if v.size]
    every = np.concatenate(positive) if positive else np.empty(0)
    log = bool(every.size and every.max() > 20 * every.min())
    for ax, panel in zip(axes, panels, strict=False):
        for variant, values in latencies.items():
            if facets[variant][0] != panel or not values.size:
                continue
            ordered = np.sort(values)
            x = np.concatenate([ordered[:1], ordered])
            y = np.arange(0, ordered.size + 1) / ordered.size
            line = facets[variant][1]
            ax.step(x, y, where="post", color=palette[line], label=_text(line), linewidth=1.5)
        if log:
            ax.set_xscale("log")
        ax.set_xlabel("block latency (ms)")
        ax.set_ylabel("fraction of blocks")
        ax.set_ylim(0, 1.02)
        if panel:
            ax.set_title(_text(panel), fontsize=9)
        _style(ax)
    for ax in axes[len(panels) :]:
        ax.set_visible(False)
    handles, labels = axes[0].get_legend_handles_labels()
    for ax in axes[1 : len(panels)]:
        for handle, label in zip(*ax.get_legend_handles_labels(), strict=True):
            if label not in labels:
                handles.append(handle)
                labels.append(label)
    fig.legend(
        handles,
        labels,
        loc="outside lower center",
        ncol=min(4, len(labels)),
        frameon=False,
        fontsize=8,
    )
    return to_png(fig)


def window_timeline(traces: WindowTraces, variants: Sequence[str]) -> bytes:
    """One panel per subflow, one line per variant (its median window over the replications);
    dotted vertical lines where flows start late or stop writing."""
    palette = colours(variants)
    names = list(traces.series)
    ncols = min(2, len(names))
    nrows = math.ceil(len(names) / ncols)
    fig = Figure(figsize=(6.2 * ncols, 3.0 * nrows + 0.4), layout="constrained")
    axes = np.atleast_1d(fig.subplots(nrows, ncols, squeeze=False, sharex=True)).ravel()
    for ax, name in zip(axes, names, strict=False):
        for variant in variants:
            if variant in traces.series[name]:
                t, w = traces.series[name][variant]
                ax.plot(t, w, color=palette[variant], label=_text(variant), linewidth=1.1)
        for when, what in traces.events:
            ax.axvline(when, color="#555555", linestyle=":", linewidth=1.0)
            ax.annotate(
                what,
                (when, 1.0),
                xycoords=("data", "axes fraction"),
                rotation=90,
                fontsize=7,
                va="top",
                ha="right",
                color="#555555",
            )
        ax.set_title(_text(f"subflow {name}"), fontsize=9)
        ax.tick_params(labelbottom=True)
        ax.set_xlabel("time (s)")
        ax.set_ylabel("window (segments)")
        ax.set_ylim(bottom=0)
        _style(ax)
    for ax in axes[len(names) :]:
        ax.set_visible(False)
    legend: dict[str, Any] = {}
    for ax in axes[: len(names)]:
        for handle, label in zip(*ax.get_legend_handles_labels(), strict=True):
            legend.setdefault(label, handle)
    fig.legend(
        list(legend.values()),
        list(legend),
        loc="outside lower center",
        ncol=min(4, max(1, len(legend))),
        frameon=False,
        fontsize=8,
    )
    return to_png(fig)

"""Published figures beside the campaign's own: the ``[[published]]`` entries of a campaign file.

A reproduction campaign carries the numbers of the paper it reproduces, each with the metric it
corresponds to and the factor settings it was measured at (``at``); the report sets the median of
our runs at those settings beside each, with their spread and the difference. The comparison is
made on the runs themselves, not on the per-point medians, so that an entry whose ``at`` leaves a
factor free pools every point of the design it covers.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

import pandas as pd
from pydantic import ValidationError

from mptcplab.analysis._checks import known_metric, listed

if TYPE_CHECKING:
    from mptcplab.campaign.spec import PublishedSpec

# Quantitative settings are compared with this relative tolerance: a design's values went
# through scaling and JSON, a published "N1 = 10" did not.
_REL_TOL = 1e-9

COLUMNS = (
    "source",
    "label",
    "metric",
    "at",
    "published",
    "ours",
    "runs",
    "ours_min",
    "ours_max",
    "difference",
    "relative",
    "tolerance",
    "agrees",
)


def _level_label(value: Any) -> str:
    return str(value).lower() if isinstance(value, bool) else str(value)


def _number(value: Any) -> float | None:
    if isinstance(value, bool):
        return None
    try:
        return float(value)
    except (TypeError, ValueError):
        return None


def same_setting(got: Any, wanted: Any) -> bool:
    """A run's factor value or level label against a published setting: numbers (a level
    "10" included) compare to a relative 1e-9, anything else as level labels."""
    a, b = _number(got), _number(wanted)
    if a is not None and b is not None:
        return math.isclose(a, b, rel_tol=_REL_TOL, abs_tol=1e-12)
    return _level_label(got) == _level_label(wanted)


def settings_match(at: Mapping[str, Any], values: Mapping[str, Any]) -> bool:
    """Whether a run with factor values and levels ``values`` is one of the runs ``at`` names."""
    return all(name in values and same_setting(values[name], v) for name, v in at.items())


def describe_settings(at: Mapping[str, Any]) -> str:
    return ", ".join(f"{k}={_level_label(v)}" for k, v in at.items()) or "every run"


def compare_published(
    runs: pd.DataFrame, entries: Sequence[PublishedSpec | Mapping[str, Any]]
) -> pd.DataFrame:
    """One row per published entry: the published value, the median of the metric over our
    finished main runs at its settings (NaN when none gives it), how many runs, their range, the
    difference ours − published, relative to the published value, and, when the entry gives a
    tolerance, whether the difference is within it.

    ``runs`` is :func:`mptcplab.analysis.to_pandas` of a store; ``entries`` a campaign's
    ``spec.published``, or tables with the same keys (``source``, ``metric``, ``value``, ``at``,
    ``label``, ``tolerance``). An entry's ``metric`` must be a metric or a column of ``runs``, the
    keys of its ``at`` columns of ``runs`` (factors, levels).

    An entry with ``relative_to`` states a ratio: each of our runs at ``at`` is divided by the
    median of the runs at ``at`` updated with ``relative_to``, and the median, range and count
    are of those quotients (NaN when the denominator's median is 0, infinite or missing).
    """
    entries = _checked_entries(runs, entries)
    done = runs
    if not runs.empty:
        done = runs[(runs["role"] == "main") & (runs["status"] == "done")]
    records = done.to_dict("records") if entries and not done.empty else []

    def metric_values(metric: str, at: Mapping[str, Any]) -> list[float]:
        return [
            float(r[metric])
            for r in records
            if settings_match(at, r) and not pd.isna(r.get(metric, math.nan))
        ]

    rows = []
    for entry in entries:
        values = metric_values(entry.metric, entry.at)
        settings = describe_settings(entry.at)
        if entry.relative_to:
            # A ratio of medians: the runs at `at` and those of its denominator are different
            # runs (other settings), so there is no pairing to take ratios run by run.
            reference = metric_values(entry.metric, {**entry.at, **entry.relative_to})
            scale = float(pd.Series(reference).median()) if reference else math.nan
            values = [v / scale for v in values] if scale and math.isfinite(scale) else []
            settings += f", relative to {describe_settings(entry.relative_to)}"
        ours = float(pd.Series(values).median()) if values else math.nan
        difference = ours - entry.value
        relative = difference / entry.value if entry.value != 0 else math.nan
        agrees: bool | None = None
        if entry.tolerance is not None and values:
            agrees = abs(difference) <= entry.tolerance
        rows.append(
            {
                "source": entry.source,
                "label": entry.label,
                "metric": entry.metric,
                "at": settings,
                "published": entry.value,
                "ours": ours,
                "runs": len(values),
                "ours_min": min(values) if values else math.nan,
                "ours_max": max(values) if values else math.nan,
                "difference": difference,
                "relative": relative,
                "tolerance": entry.tolerance,
                "agrees": agrees,
            }
        )
    return pd.DataFrame.from_records(rows, columns=list(COLUMNS))


def _checked_entries(
    runs: pd.DataFrame, entries: Sequence[PublishedSpec | Mapping[str, Any]]
) -> list[PublishedSpec]:
    """``entries`` as specs; every problem of one, one line each, named by its index."""
    from mptcplab.campaign.spec import PublishedSpec  # the spec module imports this one
    from mptcplab.scenario.load import validation_error

    checked: list[PublishedSpec] = []
    problems: list[str] = []
    for i, entry in enumerate(listed(entries, "entries", "published entries")):
        if not isinstance(entry, PublishedSpec):
            try:
                entry = PublishedSpec.model_validate(entry)
            except ValidationError as exc:
                error = validation_error(exc, root=PublishedSpec, prefix=("entries", i))
                problems += error.problems()
                continue
        checked.append(entry)
    if problems:
        raise ValueError("\n".join(problems))
    factors = [*runs.attrs.get("factors", []), *runs.attrs.get("levels", [])]
    known = (
        f"the runs' factors and levels: {', '.join(factors)}"
        if factors
        else f"the runs' columns: {', '.join(map(str, runs.columns))}"
    )
    for i, entry in enumerate(checked):
        known_metric(entry.metric, runs.columns, f"entries[{i}].metric")
        for field, names in (("at", entry.at), ("relative_to", entry.relative_to)):
            for name in names:
                # An empty table without columns (no run planned) has nothing to check against.
                if name not in runs.columns and len(runs.columns):
                    raise ValueError(
                        f"entries[{i}].{field}: {name!r} is not a column of the runs; {known}"
                    )
    return checked


def _number_text(value: float, *, signed: bool = False) -> str:
    if value is None or math.isnan(value):
        return "–"
    return f"{value:+.3g}" if signed else f"{value:.4g}"


def _agreement(row: Mapping[str, Any]) -> str:
    if row["tolerance"] is None or pd.isna(row["tolerance"]):
        return ""
    if row["agrees"] is None or pd.isna(row["agrees"]):
        return "–"
    return f"{'yes' if row['agrees'] else 'no'} (±{row['tolerance']:g})"


def display_table(compared: pd.DataFrame, *, brief: bool = False) -> pd.DataFrame:
    """The comparison of :func:`compare_published` as text columns, as the report shows it; with
    ``brief`` (a terminal) without source, metric, settings and relative difference, an entry
    without a label being named by its metric and settings."""
    rows = []
    for row in compared.to_dict("records"):
        if brief and not row["label"]:
            row["label"] = f"{row['metric']} at {row['at']}"
        spread = "–"
        if row["runs"]:
            spread = f"{_number_text(row['ours_min'])} – {_number_text(row['ours_max'])}"
        rows.append(
            {
                "source": row["source"],
                "figure": row["label"],
                "metric": row["metric"],
                "at": row["at"],
                "published": _number_text(row["published"]),
                "ours (median)": _number_text(row["ours"]),
                "runs": str(row["runs"]),
                "ours, range": spread,
                "ours − published": _number_text(row["difference"], signed=True),
                "relative": "–" if pd.isna(row["relative"]) else f"{row['relative']:+.0%}",
                "agrees": _agreement(row),
            }
        )
    frame = pd.DataFrame.from_records(rows)
    if brief and not frame.empty:
        frame = frame.drop(columns=["source", "metric", "at", "relative"])
    if not frame.empty and not frame["figure"].astype(bool).any():
        frame = frame.drop(columns="figure")
    if not frame.empty and not frame["agrees"].astype(bool).any():
        frame = frame.drop(columns="agrees")
    return frame

"""Analysis of campaign stores: metrics, tables, sensitivity, plots and the HTML report.

    from mptcplab.analysis import to_pandas, point_medians, percentile_table
    runs = to_pandas("results/quickstart/store.sqlite")        # one row per run
    medians = point_medians(runs, ["aggregation_benefit"])      # median over replications
    percentile_table(medians, "aggregation_benefit")            # 5/25/50/75/95th per variant

- ``metrics``: aggregation benefit (spec §5.1), Jain's index (§5.2), log gain (§5.3) and the run
  metrics extracted from a backend's report;
- ``metric_needs``: :func:`unmet_need`, what a metric needs of a scenario to have a value (an
  MPTCP flow, a blocks application, ...), checked before a campaign runs;
- ``tables``: :func:`to_pandas`, :func:`point_medians`, :func:`percentile_table`, CSV/Parquet
  :func:`export`;
- ``fairshare``: :func:`fair_share`, every flow's max-min fair goodput, multipath users pooling
  their paths (the draft's "optimum without probing cost"; with :func:`probing_floors`, "with
  probing cost"), or :class:`InfeasibleFloors` when the floors overfill a link;
- ``capacity_bound``: :func:`max_total_goodput`, the most the flows can get together (CoNEXT
  2013's congestion-balancing bound);
- ``published``: :func:`compare_published`, a paper's figures beside the median of the runs at
  the settings they were measured at (a campaign's ``[[published]]`` entries);
- ``latency``: :func:`block_latencies`, every application block's latency pooled per variant,
  and :func:`latency_table` (NSDI 2012 Fig. 7's distribution), a row of which is
  :func:`latency_summary`;
- ``paired``: :func:`compare_variants`, each pair of levels of a qualitative factor compared
  point by point (median difference with its interval, sign test); two that share one point
  only, over their replications there; :func:`paired_differences`, the differences it tests,
  and :func:`median_interval`, the interval;
- ``rank_sum``: :func:`compare_samples`, two samples compared by the rank-sum test with the
  Hodges–Lehmann shift and its interval;
- ``heatmap``: :func:`heat_grid`, a metric's medians over the pair of factors that explains most
  of it (a :class:`HeatGrid`);
- ``sensitivity``: spread of the percentiles across independent designs (§4.6);
- ``plots`` and ``report``: figures and the self-contained HTML report (:func:`build_report`,
  :func:`write_report`), and from a store what it shows: :func:`variant_comparisons`,
  :func:`published_comparison`.

Names are imported on first use: run workers need the metrics, not pandas or matplotlib.
"""

from __future__ import annotations

import importlib
from typing import Any

_EXPORTS = {
    "aggregation_benefit": "mptcplab.analysis.metrics",
    "jain_index": "mptcplab.analysis.metrics",
    "log_gain": "mptcplab.analysis.metrics",
    "run_metrics": "mptcplab.analysis.metrics",
    "unmet_need": "mptcplab.analysis.metric_needs",
    "fair_share": "mptcplab.analysis.fairshare",
    "InfeasibleFloors": "mptcplab.analysis.fairshare",
    "max_total_goodput": "mptcplab.analysis.capacity_bound",
    "probing_floors": "mptcplab.analysis.fairshare",
    "compare_samples": "mptcplab.analysis.rank_sum",
    "heat_grid": "mptcplab.analysis.heatmap",
    "HeatGrid": "mptcplab.analysis.heatmap",
    "block_latencies": "mptcplab.analysis.latency",
    "latency_summary": "mptcplab.analysis.latency",
    "latency_table": "mptcplab.analysis.latency",
    "compare_published": "mptcplab.analysis.published",
    "compare_variants": "mptcplab.analysis.paired",
    "median_interval": "mptcplab.analysis.paired",
    "paired_differences": "mptcplab.analysis.paired",
    "build_report": "mptcplab.analysis.report",
    "published_comparison": "mptcplab.analysis.report",
    "variant_comparisons": "mptcplab.analysis.report",
    "write_report": "mptcplab.analysis.report",
    "sensitivity_table": "mptcplab.analysis.sensitivity",
    "export": "mptcplab.analysis.tables",
    "percentile_table": "mptcplab.analysis.tables",
    "point_medians": "mptcplab.analysis.tables",
    "to_pandas": "mptcplab.analysis.tables",
}

__all__ = sorted(_EXPORTS)


def __getattr__(name: str) -> Any:
    if name in _EXPORTS:
        return getattr(importlib.import_module(_EXPORTS[name]), name)
    raise AttributeError(f"module 'mptcplab.analysis' has no attribute {name!r}")


def __dir__() -> list[str]:
    # Lazy names are not module globals yet; list them so dir() and notebook completion see them.
    return sorted({*globals(), *_EXPORTS})

"""Analysis of campaign stores: metrics, tables, sensitivity, plots and the HTML report.

    from mptcplab.analysis import to_pandas, point_medians, percentile_table
    runs = to_pandas("results/quickstart/store.sqlite")        # one row per run
    medians = point_medians(runs, ["aggregation_benefit"])      # median over replications
    percentile_table(medians, "aggregation_benefit")            # 5/25/50/75/95th per variant

- ``metrics``: aggregation benefit (spec §5.1), Jain's index (§5.2), log gain (§5.3) and the run
  metrics extracted from a backend's report;
- ``tables``: :func:`to_pandas`, :func:`point_medians`, :func:`percentile_table`, CSV/Parquet
  :func:`export`;
- ``sensitivity``: spread of the percentiles across independent designs (§4.6);
- ``plots`` and ``report``: figures and the self-contained HTML report.
"""

from mptcplab.analysis.metrics import aggregation_benefit, jain_index, log_gain, run_metrics
from mptcplab.analysis.report import build_report, write_report
from mptcplab.analysis.sensitivity import sensitivity_table
from mptcplab.analysis.tables import export, percentile_table, point_medians, to_pandas

__all__ = [
    "aggregation_benefit",
    "build_report",
    "export",
    "jain_index",
    "log_gain",
    "percentile_table",
    "point_medians",
    "run_metrics",
    "sensitivity_table",
    "to_pandas",
    "write_report",
]

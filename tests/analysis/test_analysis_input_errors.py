"""Bad input to the notebook API is refused by a ValueError naming the argument and what was
expected, not by an error from inside pandas, numpy or matplotlib, nor by a blank result."""

from __future__ import annotations

import math
import warnings

import numpy as np
import pandas as pd
import pytest

import mptcplab.analysis as analysis
from mptcplab import sim
from mptcplab.analysis import (
    aggregation_benefit,
    compare_published,
    compare_samples,
    compare_variants,
    fair_share,
    heat_grid,
    jain_index,
    log_gain,
    max_total_goodput,
    median_interval,
    percentile_table,
    plots,
    point_medians,
    run_metrics,
    unmet_need,
)
from mptcplab.analysis.fairshare import FairShare
from mptcplab.analysis.heatmap import HeatGrid
from mptcplab.analysis.latency import latency_table
from mptcplab.scenario import templates

PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"


def _runs() -> pd.DataFrame:
    """Finished main runs: 8 points × 2 cc levels × 2 replications, as to_pandas gives them."""
    rows = [
        {
            "role": "main",
            "status": "done",
            "design": 0,
            "point": point,
            "replication": rep,
            "variant": f"cc={cc}",
            "cc": cc,
            "cap0": 1.0 + point,
            "goodput_mbps": 1.0 + point + (0.5 if cc == "olia" else 0.0) + 0.1 * rep,
        }
        for point in range(8)
        for cc in ("lia", "olia")
        for rep in range(2)
    ]
    runs = pd.DataFrame.from_records(rows)
    runs.attrs.update(factors=["cap0"], levels=["cc"])
    return runs


def _grid_medians(points: int = 40) -> pd.DataFrame:
    rng = np.random.default_rng(1)
    frame = pd.DataFrame(rng.uniform(0.0, 1.0, size=(points, 3)), columns=["a", "b", "c"])
    frame["m"] = frame["a"] + frame["b"]
    frame["variant"] = "v"
    return frame


def _scenario(**links: float) -> dict:
    return {
        "links": [{"id": name, "capacity_mbps": c} for name, c in links.items()],
        "flows": [{"id": "f", "protocol": "mptcp", "paths": [[name] for name in links]}],
    }


# --- 1. a string is not a list of names -------------------------------------------------------


@pytest.mark.parametrize(
    ("call", "argument"),
    [
        (lambda: point_medians(_runs(), "goodput_mbps"), "metrics"),
        (lambda: heat_grid(_grid_medians(), "m", "a", ["v"]), "factors"),
        (lambda: heat_grid(_grid_medians(), "m", ["a", "b"], "v"), "variants"),
        (lambda: aggregation_benefit(5, "10"), "capacities"),
        (lambda: jain_index("12"), "values"),
    ],
)
def test_a_string_is_refused_where_a_list_is_expected(call, argument: str) -> None:
    with pytest.raises(ValueError, match=rf"^{argument}: expected a list of .*, got the string"):
        call()


# --- 2. confidence -----------------------------------------------------------------------------


@pytest.mark.parametrize("confidence", [95, float("nan"), 0.0, 1.0, True])
def test_confidence_must_be_a_coverage_in_the_open_unit_interval(confidence) -> None:
    runs = _runs()
    medians = point_medians(runs, ["goodput_mbps"])
    expected = rf"confidence: expected a number in \(0, 1\), got {confidence!r}"
    with pytest.raises(ValueError, match=expected):
        compare_variants(medians, "goodput_mbps", confidence=confidence)
    with pytest.raises(ValueError, match=expected):
        compare_samples([1.0, 2.0, 3.0], [2.0, 3.0, 4.0], confidence=confidence)
    with pytest.raises(ValueError, match=expected):
        median_interval([1.0, 2.0, 3.0], confidence)


# --- 3. misspelt names -------------------------------------------------------------------------


def test_an_unknown_metric_is_refused_with_the_metrics_the_runs_have() -> None:
    with pytest.raises(ValueError, match=r"metrics: unknown metric 'goodput_mpbs'.*goodput_mbps"):
        point_medians(_runs(), ["goodput_mpbs"])
    # A metric no run gives is still a column of blanks: the report shows it as such.
    medians = point_medians(_runs(), ["goodput_mbps", "completion_s"])
    assert medians["completion_s"].isna().all() and medians["goodput_mbps"].notna().all()


def _entry(**fields) -> dict:
    return {"source": "paper", "metric": "goodput_mbps", "value": 2.0, **fields}


def test_a_published_entry_naming_what_the_runs_lack_is_refused() -> None:
    with pytest.raises(ValueError, match=r"entries\[1\]\.at: 'ccc' is not a column.*: cap0, cc"):
        compare_published(_runs(), [_entry(), _entry(at={"ccc": "lia"})])
    with pytest.raises(ValueError, match=r"entries\[0\]\.metric: unknown metric 'goodput_mpbs'"):
        compare_published(_runs(), [_entry(metric="goodput_mpbs")])
    # The same entry with the names right finds its runs.
    table = compare_published(_runs(), [_entry(at={"cc": "lia"})])
    assert table.loc[0, "runs"] == 16


def test_a_published_entry_with_missing_keys_gets_one_line_per_problem() -> None:
    with pytest.raises(ValueError) as caught:
        compare_published(_runs(), [_entry(), {"source": "paper"}])
    lines = str(caught.value).splitlines()
    assert sorted(lines) == [
        "entries[1].metric: missing field 'metric'",
        "entries[1].value: missing field 'value'",
    ]


def test_floors_of_an_unknown_flow_entry_are_refused() -> None:
    with pytest.raises(ValueError, match=r"floors: unknown flow entry 'nope'; .*: f"):
        fair_share(_scenario(a=10.0, b=5.0), {"nope": [1.0]})


# --- 4. compare_variants' table ----------------------------------------------------------------


def test_compare_variants_says_what_its_table_lacks() -> None:
    medians = point_medians(_runs(), ["goodput_mbps"])
    bare = medians.copy()
    bare.attrs = {}
    with pytest.raises(ValueError, match=r"medians: .*no attrs\['levels'\]"):
        compare_variants(bare, "goodput_mbps")
    renamed = medians.rename(columns={"cc": "congestion"})
    with pytest.raises(ValueError, match=r"attrs\['levels'\] names 'cc', which is not a column"):
        compare_variants(renamed, "goodput_mbps")
    twice = pd.concat([medians, medians], ignore_index=True)
    twice.attrs = dict(medians.attrs)
    with pytest.raises(ValueError, match=r"medians: more than one row at \(design, point\)"):
        compare_variants(twice, "goodput_mbps")
    assert compare_variants(medians, "goodput_mbps").loc[0, "points"] == 8


# --- 5. heat_grid ------------------------------------------------------------------------------


def _with(column: str, values) -> pd.DataFrame:
    frame = _grid_medians()
    frame[column] = values
    return frame


@pytest.mark.parametrize(
    ("medians", "factors", "variants", "message"),
    [
        (_with("c", ["x", "y"] * 20), ["a", "c"], ["v"], r"factors: column 'c' holds str"),
        (_with("c", [f"l{i % 10}" for i in range(40)]), ["a", "c"], ["v"], r"factors: .*'c'"),
        (_with("a", [math.nan, *[0.5] * 39]), ["a", "b"], ["v"], r"factors: .*'a' has no value"),
        (_with("a", [math.inf, *np.linspace(0, 1, 39)]), ["a", "b"], ["v"], r"factors: .*'a'"),
        (_grid_medians(), ["a", "b"], ["v", "w"], r"variants: unknown variant 'w'"),
    ],
)
def test_heat_grid_refuses_what_it_cannot_draw(medians, factors, variants, message) -> None:
    with pytest.raises(ValueError, match=message):
        heat_grid(medians, "m", factors, variants)


def test_heat_grid_draws_nothing_for_a_metric_no_factor_can_explain() -> None:
    assert heat_grid(_with("m", 1.0), "m", ["a", "b", "c"], ["v"]) is None


# --- 6. plots ----------------------------------------------------------------------------------


def test_plots_refuse_what_leaves_nothing_to_draw() -> None:
    empty = HeatGrid("m", "x", "y", ["1"], ["2"], {"v": np.full((1, 1), np.nan)}, {}, math.nan)
    with pytest.raises(ValueError, match=r"grid: no variant has a value of 'm'"):
        plots.heat_map(empty, "", None)
    medians = point_medians(_runs(), ["goodput_mbps"])
    with pytest.raises(ValueError, match=r"factors: expected at least one factor"):
        plots.against_factors(medians, "goodput_mbps", "", [], [], ["cc=lia"])
    with pytest.raises(ValueError, match=r"latencies: expected the block latencies"):
        plots.latency_cdf({}, {})
    with pytest.raises(ValueError, match=r"differences: no pair has a finite difference"):
        plots.difference_cdf([("b − a", [math.nan])], "m", "")
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # not matplotlib's "No artists with labels"
        with pytest.raises(ValueError, match=r"medians: no value of 'goodput_mbps'"):
            plots.distribution(medians, "goodput_mbps", "", ["cc=reno"])


def test_lists_are_taken_where_arrays_are_natural() -> None:
    png = plots.difference_cdf([("b − a", [1.0, -1.0, 2.0])], "m", "")
    assert png.startswith(PNG_SIGNATURE)
    table = latency_table({"v": [1, 2, 3]})
    assert table.equals(latency_table({"v": np.array([1.0, 2.0, 3.0])}))


# --- 7. pydantic objects or their dictionaries -------------------------------------------------


def test_run_metrics_and_unmet_need_take_the_models_as_their_siblings_do() -> None:
    scenario = templates.make("two_path", duration_s=1.0)
    report = sim.run(scenario)
    assert run_metrics(report, scenario) == run_metrics(report.to_dict(), scenario.to_dict())
    need = unmet_need("jain_fairness", [scenario], "the runs")
    assert need is not None
    assert need == unmet_need("jain_fairness", [scenario.to_dict()], "the runs")


# --- 8. siblings alike -------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("mptcp", "tcp", "argument"),
    [
        (-2, 1, "mptcp_goodput"),
        ("2", 1, "mptcp_goodput"),
        (np.array([2.0]), np.array([1.0]), "mptcp_goodput"),
        (2.0, math.inf, "tcp_goodput"),
    ],
    ids=["negative", "string", "array", "infinite"],
)
def test_log_gain_refuses_what_aggregation_benefit_refuses(mptcp, tcp, argument: str) -> None:
    with pytest.raises(ValueError, match=rf"{argument}: expected a finite value >= 0"):
        log_gain(mptcp, tcp)
    # Not measured: no logarithm, as documented.
    assert math.isnan(log_gain(math.nan, 1.0)) and math.isnan(log_gain(1.0, math.nan))


def test_jain_index_of_huge_or_tiny_shares_is_that_of_the_same_shares_in_another_unit() -> None:
    assert jain_index([1e200, 1e200]) == 1.0
    assert jain_index([1e-200, 1e-200]) == 1.0
    assert jain_index([3e200, 1e200]) == pytest.approx(jain_index([3.0, 1.0]))


def test_capacity_and_link_errors_are_the_same_for_both_bounds() -> None:
    for bound in (fair_share, max_total_goodput):
        with pytest.raises(ValueError, match=r"links\[1\]\.capacity_mbps: expected a finite"):
            bound(_scenario(a=10.0, b=-2.0))
        unknown = _scenario(a=10.0)
        unknown["flows"][0]["paths"].append(["nolink"])
        with pytest.raises(ValueError, match=r"flows\[0\]\.paths\[1\]: unknown link 'nolink'"):
            bound(unknown)
    no_flows = {"links": [{"id": "a", "capacity_mbps": 10.0}], "flows": []}
    assert fair_share(no_flows) == FairShare(per_flow_mbps={}, per_path_mbps={})
    assert max_total_goodput(no_flows) == 0.0


# --- 9. percentile_table -----------------------------------------------------------------------


def test_percentile_table_says_what_is_wrong_with_its_arguments() -> None:
    medians = point_medians(_runs(), ["goodput_mbps"])
    with pytest.raises(ValueError, match=r"percentiles: expected numbers in \[0, 100\]"):
        percentile_table(medians, "goodput_mbps", percentiles=[150])
    with pytest.raises(ValueError, match=r"metric: 'goodput' is not a column of medians"):
        percentile_table(medians, "goodput")
    with pytest.raises(ValueError, match=r"by: 'congestion' is not a column of medians"):
        percentile_table(medians, "goodput_mbps", by="congestion")
    with pytest.raises(ValueError, match=r"metric: column 'cc' holds str values, not numbers"):
        percentile_table(medians, "cc")
    medians.loc[0, "goodput_mbps"] = math.inf
    with pytest.raises(ValueError, match=r"metric: column 'goodput_mbps' has 1 infinite value"):
        percentile_table(medians, "goodput_mbps")


def test_percentile_table_of_no_medians_keeps_its_columns() -> None:
    runs = _runs()
    runs["status"] = "failed"
    table = percentile_table(point_medians(runs, ["goodput_mbps"]), "goodput_mbps")
    assert table.empty
    assert list(table.columns) == ["variant", "points", "p5", "p25", "p50", "p75", "p95", "mean"]


# --- 10. public names --------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "module"),
    [
        ("InfeasibleFloors", "fairshare"),
        ("variant_comparisons", "report"),
        ("published_comparison", "report"),
        ("median_interval", "paired"),
        ("paired_differences", "paired"),
        ("latency_summary", "latency"),
        ("HeatGrid", "heatmap"),
    ],
)
def test_every_public_name_is_exported(name: str, module: str) -> None:
    import importlib

    assert name in analysis.__all__
    owner = importlib.import_module(f"mptcplab.analysis.{module}")
    assert getattr(analysis, name) is getattr(owner, name)

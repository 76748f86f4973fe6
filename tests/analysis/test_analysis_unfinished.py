"""Times that ran past their run: a transfer that did not complete, a window that did not
recover. They are kept as +inf, larger than any finished value, so that the variant that fails
most is not the one whose median looks best. Oracles: a transfer larger than the link can carry
in the run, order statistics counted by hand, and scipy's rank-sum test on the same ranks."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from mptcplab import sim
from mptcplab.analysis.metrics import metric_info, run_metrics
from mptcplab.analysis.paired import compare_variants
from mptcplab.analysis.rank_sum import compare_samples
from mptcplab.analysis.report import build_report
from mptcplab.analysis.tables import percentile_table, point_medians, to_pandas
from mptcplab.analysis.unfinished import differences, quantiles
from mptcplab.campaign import load, run_campaign

INF = math.inf


def _transfer(megabytes: float) -> dict[str, object]:
    return {
        "duration_s": 2.0,
        "seed": 1,
        "links": [{"id": "l", "capacity_mbps": 10.0, "delay_ms": 5.0}],
        "flows": [
            {
                "id": "t",
                "protocol": "tcp",
                "cc": "reno",
                "paths": [["l"]],
                "app": {"kind": "size", "bytes": int(megabytes * 1e6)},
            }
        ],
    }


def test_a_transfer_the_run_cannot_carry_has_an_infinite_completion_time() -> None:
    # 10 Mbit/s for 2 s carries at most 2.5 MB: 5 MB cannot complete, 0.5 MB can.
    unfinished = _transfer(5.0)
    assert run_metrics(sim.run(unfinished), unfinished)["completion_s"] == INF
    finished = _transfer(0.5)
    assert 0.4 < run_metrics(sim.run(finished), finished)["completion_s"] < 2.0
    assert metric_info("completion_s").unfinished


def test_a_metric_that_times_nothing_keeps_no_infinite_value() -> None:
    """Only the metrics that time something may be infinite; goodput never is."""
    assert not metric_info("goodput_mbps").unfinished


def _runs(values: dict[str, list[list[float]]]) -> pd.DataFrame:
    """Finished runs of variants cc=lia and cc=olia: values[cc][point] over the replications."""
    rows = []
    for cc, points in values.items():
        for point, replications in enumerate(points):
            for r, value in enumerate(replications):
                rows.append(
                    {
                        "role": "main",
                        "status": "done",
                        "design": 0,
                        "point": point,
                        "replication": r,
                        "variant": f"cc={cc}",
                        "cc": cc,
                        "completion_s": value,
                    }
                )
    frame = pd.DataFrame(rows)
    frame.attrs["levels"] = ["cc"]
    frame.attrs["factors"] = []
    return frame


def test_the_variant_that_does_not_finish_is_the_slower_one() -> None:
    """LIA completes in 10 s in every replication; OLIA completes in 8 s in 2 of 5 and not at
    all in the others. Left out, the unfinished runs made OLIA's median 8 s and the verdict
    "olia lower (better)"; counted, OLIA's median is infinite at all 8 points, the sign test
    gives 2·2⁻⁸ and the verdict is the opposite."""
    lia = [[10.0] * 5 for _ in range(8)]
    olia = [[8.0, 8.0, INF, INF, INF] for _ in range(8)]
    medians = point_medians(_runs({"lia": lia, "olia": olia}), ["completion_s"])
    assert medians.loc[medians["cc"] == "olia", "completion_s"].tolist() == [INF] * 8
    assert medians.loc[medians["cc"] == "lia", "completion_s"].tolist() == [10.0] * 8
    row = compare_variants(medians, "completion_s", higher_is_better=False).iloc[0]
    assert row["p_value"] == pytest.approx(2 * 0.5**8)
    assert row["median_difference"] == INF and row["b_higher_share"] == 1.0
    assert row["verdict"] == "olia higher (worse)"


def test_a_median_on_finished_runs_stays_finite() -> None:
    """Two unfinished runs of five leave the median (the 3rd value) finished."""
    medians = point_medians(_runs({"lia": [[3.0, 1.0, INF, 2.0, INF]]}), ["completion_s"])
    assert medians["completion_s"].tolist() == [3.0]


def test_two_unfinished_points_are_tied() -> None:
    assert differences([INF, INF, 5.0], [INF, 5.0, INF]).tolist() == [0.0, INF, -INF]


def test_percentiles_count_unfinished_points_as_the_largest() -> None:
    medians = pd.DataFrame(
        {"variant": ["v"] * 5, "completion_s": [4.0, 1.0, INF, 3.0, 2.0]},
    )
    table = percentile_table(medians, "completion_s", percentiles=[0, 25, 50, 75, 100])
    row = table.iloc[0]
    # Order statistics 1, 2, 3, 4, inf at positions 0, 1, 2, 3, 4 (q·(n − 1)).
    assert [row["p0"], row["p25"], row["p50"], row["p75"], row["p100"]] == [1, 2, 3, 4, INF]
    assert row["points"] == 5 and row["mean"] == INF
    # Between the 4th value and the unfinished 5th, and between two unfinished ones.
    assert quantiles([1.0, 2.0, 3.0, 4.0, INF], [0.8]).tolist() == [INF]
    assert math.isinf(quantiles([1.0, INF, INF], [0.75])[0])
    # Without infinite values, numpy's quantiles exactly.
    rng = np.random.default_rng(2)
    values = rng.exponential(size=17)
    qs = [0.05, 0.5, 0.95]
    assert quantiles(values, qs).tolist() == np.quantile(values, qs).tolist()
    with pytest.raises(ValueError, match="finite numbers or \\+inf"):
        percentile_table(medians.assign(completion_s=-INF), "completion_s")


def test_two_samples_with_unfinished_runs_compare_by_their_ranks() -> None:
    """The rank-sum test depends on ranks only: an unfinished run ranks as any value above the
    finished ones would, here 1e9 (three tied: the normal approximation with its tie
    correction, as for any tied samples)."""
    a = np.array([10.0, 11.0, 10.5, 9.5, 10.2])
    b = np.array([8.0, 8.5, INF, INF, INF])
    result = compare_samples(a, b)
    stand_in = np.where(np.isinf(b), 1e9, b)
    expected = stats.mannwhitneyu(stand_in, a, alternative="two-sided", method="asymptotic")
    assert result.p_value == pytest.approx(expected.pvalue)
    assert result.b_higher_share == pytest.approx(15 / 25)
    # 15 of the 25 differences are infinite: the median difference is.
    assert result.shift == INF
    both = compare_samples(np.array([INF, INF]), np.array([INF, INF, INF]))
    assert both.p_value == 1.0 and both.shift == 0.0


UNFINISHED_CAMPAIGN = """\
name = "unfinished"
seed = 3
replications = 1
metrics = ["completion_s"]

[design]
kind = "lhs"
points = 6
designs = 2

[scenario]
template = "two_path"
duration_s = 2.0
app = { kind = "size", bytes = 3000000 }

[factors.cap0]
low = 1.0
high = 20.0
param = "capacity_mbps[0]"

[factors.cap1]
low = 1.0
high = 20.0
param = "capacity_mbps[1]"

[factors.cc]
levels = ["lia", "olia"]
"""


def test_the_report_says_which_medians_are_unfinished(tmp_path: Path) -> None:
    """3 MB over two paths of 1-20 Mbit/s each in 2 s: the slowest points cannot complete (at
    most 2·(c0 + c1)/8 MB), the fastest can. The report keeps their infinite medians in its
    tables, says how many there are, and draws the finished ones."""
    path = tmp_path / "unfinished.toml"
    path.write_text(UNFINISHED_CAMPAIGN)
    summary = run_campaign(load(path), output=tmp_path / "store.sqlite", progress=False, jobs=2)
    assert summary.failed == 0
    runs = to_pandas(summary.store)
    done = runs[runs["role"] == "main"]
    capacity = done["cap0"] + done["cap1"]
    unfinished = done["completion_s"] == INF
    # A path pair that carries less than 3 MB in 2 s at its full rate cannot finish.
    assert unfinished[2 * capacity / 8 < 3.0].all()
    assert 0 < unfinished.sum() < len(done)
    html = build_report(summary.store)
    count = int(unfinished.sum())
    assert f"{count} point medians are infinite" in html or (
        count == 1 and "1 point median is infinite" in html
    )
    assert "∞" in html
    assert "not measured: " in html  # the spread across designs

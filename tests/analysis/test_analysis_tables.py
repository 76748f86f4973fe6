"""Tables of a real store against values recomputed straight from the SQLite rows."""

from __future__ import annotations

import json
import sqlite3
import statistics
from collections import defaultdict

import numpy as np
import pandas as pd
import pytest

from mptcplab.analysis import percentile_table, point_medians, to_pandas
from mptcplab.analysis.metrics import PAYLOAD_FRACTION, aggregation_benefit
from mptcplab.analysis.sensitivity import sensitivity_table
from mptcplab.analysis.tables import export


def _sql(store, query: str) -> list[sqlite3.Row]:
    db = sqlite3.connect(store)
    db.row_factory = sqlite3.Row
    try:
        return db.execute(query).fetchall()
    finally:
        db.close()


def test_to_pandas_has_one_row_per_main_run(analysis_store) -> None:
    runs = to_pandas(analysis_store)
    assert len(runs) == 2 * 4 * 2 * 2  # designs × points × variants × replications
    assert set(runs["role"]) == {"main"}
    assert set(runs["status"]) == {"done"}
    assert runs.attrs["factors"] == ["cap0", "rtt1"]
    assert runs.attrs["levels"] == ["cc"]
    assert set(runs["variant"]) == {"cc=lia", "cc=olia"}
    assert runs["cap0"].between(0.5, 20.0).all()
    with_references = to_pandas(analysis_store, references=True)
    assert (with_references["role"] == "reference").sum() > 0


def test_a_reference_run_the_variants_share_is_one_row(analysis_store) -> None:
    # lia and olia share their single-path TCP references; each was written once per variant,
    # labelled with that variant's congestion control.
    refs = to_pandas(analysis_store, references=True).query("role == 'reference'")
    keys = _sql(analysis_store, "SELECT DISTINCT run_key FROM tasks WHERE role = 'reference'")
    assert len(refs) == len(keys) and refs["run_key"].is_unique
    assert refs["cc"].isna().all() and set(refs["variant"]) == {"all"}


def test_point_medians_are_medians_of_the_replications(analysis_store) -> None:
    rows = _sql(
        analysis_store,
        "SELECT t.design, t.point, t.variant, r.metrics FROM tasks t JOIN runs r "
        "ON r.run_key = t.run_key WHERE t.role = 'main'",
    )
    expected = defaultdict(list)
    for row in rows:
        cc = json.loads(row["variant"])["cc"]
        expected[(row["design"], row["point"], f"cc={cc}")].append(
            json.loads(row["metrics"])["goodput_mbps"]
        )
    medians = point_medians(to_pandas(analysis_store), ["goodput_mbps"])
    assert len(medians) == len(expected) == 16
    for m in medians.itertuples():
        values = expected[(m.design, m.point, m.variant)]
        assert m.replications == len(values) == 2
        assert m.goodput_mbps == pytest.approx(statistics.median(values))


def test_measured_aggregation_benefit_uses_the_reference_runs(analysis_store) -> None:
    goodput = {
        row["run_key"]: json.loads(row["metrics"])["goodput_mbps"]
        for row in _sql(analysis_store, "SELECT run_key, metrics FROM runs")
    }
    refs = {
        row["run_key"]: json.loads(row["reference_keys"])
        for row in _sql(
            analysis_store, "SELECT run_key, reference_keys FROM tasks WHERE role = 'main'"
        )
    }
    runs = to_pandas(analysis_store)
    for run in runs.itertuples():
        path_goodputs = [goodput[k] for k in refs[run.run_key]]
        assert run.aggregation_benefit_measured == pytest.approx(
            aggregation_benefit(run.goodput_mbps, path_goodputs)
        )
        if min(path_goodputs) > 0 and run.goodput_mbps > 0:
            assert run.log_gain == pytest.approx(np.log(run.goodput_mbps / max(path_goodputs)))


def test_reference_runs_stay_below_their_path_capacity(analysis_store) -> None:
    rows = _sql(
        analysis_store,
        "SELECT t.path, t.factors, r.metrics FROM tasks t JOIN runs r ON r.run_key = t.run_key "
        "WHERE t.role = 'reference'",
    )
    assert rows
    for row in rows:
        capacity = json.loads(row["factors"])["cap0"] if row["path"] == 0 else 4.0
        assert json.loads(row["metrics"])["goodput_mbps"] <= capacity * PAYLOAD_FRACTION * 1.001


def test_percentile_table_matches_numpy(analysis_store) -> None:
    medians = point_medians(to_pandas(analysis_store), ["goodput_mbps"])
    table = percentile_table(medians, "goodput_mbps").set_index("variant")
    for variant, group in medians.groupby("variant"):
        values = group["goodput_mbps"].to_numpy()
        for p in (5, 25, 50, 75, 95):
            assert table.loc[variant, f"p{p}"] == pytest.approx(np.percentile(values, p))
        assert table.loc[variant, "points"] == 8
    by_level = percentile_table(medians, "goodput_mbps", by="cc")
    assert list(by_level["cc"]) == ["lia", "olia"]


def test_sensitivity_table_relative_std_by_hand() -> None:
    # Design 1 is design 0 shifted by 1: each percentile differs by exactly 1 between designs,
    # whose sample standard deviation is 1/√2; the pooled range is 10 - 0 + 1 = 11.
    base = np.linspace(0.0, 10.0, 21)
    frame = pd.DataFrame(
        {
            "design": [0] * 21 + [1] * 21,
            "variant": ["all"] * 42,
            "m": np.concatenate([base, base + 1.0]),
        }
    )
    table = sensitivity_table(frame, "m")
    assert table is not None
    for p in (5, 25, 50, 75, 95):
        assert table.loc[0, f"p{p}"] == pytest.approx((1 / np.sqrt(2)) / 11.0)
    identical = frame.assign(m=np.concatenate([base, base]))
    assert sensitivity_table(identical, "m").loc[0, "max"] == 0.0
    assert sensitivity_table(frame[frame["design"] == 0], "m") is None


def test_export_parquet_round_trip(analysis_store, tmp_path) -> None:
    out = tmp_path / "runs.parquet"
    rows = export(analysis_store, out, fmt="parquet")
    back = pd.read_parquet(out)
    assert len(back) == rows
    assert {"run_key", "seed", "cap0", "rtt1", "cc", "goodput_mbps", "role"} <= set(back)

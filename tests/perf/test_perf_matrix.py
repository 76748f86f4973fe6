"""The gain matrix from hand-made records: means per relation, ln of their ratio, the critical
classes of spec §5.3, address families apart."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest

from mptcplab.analysis.metrics import critical_class
from mptcplab.backends.perf.matrix import gain_matrix, heat_grid


def rec(transport: str, source: str, dest: str, mbps: float, **extra: Any) -> dict[str, Any]:
    return {
        "host": "h1",
        "family": 4,
        "transport": transport,
        "bind": source if transport == "tcp" else "*",
        "source": source,
        "server": dest,
        "goodput_mbps": mbps,
        "mptcp": transport == "mptcp",
        **extra,
    }


@pytest.mark.parametrize(
    ("ratio", "expected"),
    [
        (1.2, None),
        (0.975, None),
        (0.9749, "≥ 80 %"),
        (0.8, "≥ 80 %"),
        (0.7999, "50–80 %"),
        (0.5, "50–80 %"),
        (0.4999, "< 50 %"),
        (math.nan, None),
    ],
)
def test_critical_classes_follow_the_nornet_bounds(ratio: float, expected: str | None) -> None:
    assert critical_class(ratio) == expected


def test_each_source_path_is_compared_with_the_hosts_unbound_mptcp() -> None:
    records = [
        rec("tcp", "a1", "d", 4.0),
        rec("tcp", "a1", "d", 6.0),
        rec("tcp", "a2", "d", 10.0),
        rec("mptcp", "a1", "d", 9.0),  # the kernel's first subflow left from a1
        rec("mptcp", "a2", "d", 7.0),
    ]
    m = gain_matrix(records).set_index("source")
    assert m.loc["a1", "tcp_mbps"] == pytest.approx(5.0)
    assert m.loc["a1", "mptcp_mbps"] == pytest.approx(8.0)
    assert m.loc["a1", "log_gain"] == pytest.approx(math.log(8.0 / 5.0))
    assert pd.isna(m.loc["a1", "critical"])
    assert (m.loc["a1", "tcp_runs"], m.loc["a1", "mptcp_runs"]) == (2, 2)
    assert m.loc["a2", "ratio"] == pytest.approx(0.8)
    assert m.loc["a2", "critical"] == "≥ 80 %"


def test_failures_and_fallbacks_are_counted_not_averaged() -> None:
    records = [
        rec("tcp", "a", "d", 10.0),
        rec("tcp", "a", "d", math.nan, error="refused"),
        rec("mptcp", "a", "d", 4.0, mptcp=False),
        rec("mptcp", "a", "d", math.nan, error="timed out"),
    ]
    (row,) = gain_matrix(records).itertuples()
    assert (row.tcp_mbps, row.mptcp_mbps) == (10.0, 4.0)
    assert (row.tcp_runs, row.mptcp_runs, row.mptcp_fallbacks, row.failed) == (1, 1, 1, 2)
    assert row.critical == "< 50 %"


def test_families_and_hosts_are_kept_apart() -> None:
    records = [
        rec("tcp", "a", "d", 5.0),
        rec("mptcp", "a", "d", 10.0),
        rec("tcp", "a6", "d", 5.0, family=6),
        rec("mptcp", "a6", "d", 2.5, family=6),
        rec("tcp", "b", "d", 5.0, host="h2"),  # h2 made no MPTCP run
    ]
    m = gain_matrix(records).set_index("source")
    assert m.loc["a", "log_gain"] == pytest.approx(math.log(2))
    assert m.loc["a6", "log_gain"] == pytest.approx(math.log(0.5))
    assert math.isnan(m.loc["b", "log_gain"]) and m.loc["b", "mptcp_runs"] == 0


def test_the_heat_grid_puts_sources_down_and_destinations_across() -> None:
    records = [
        rec("tcp", "a", "d1", 5.0),
        rec("mptcp", "a", "d1", 10.0),
        rec("tcp", "b", "d2", 5.0),
        rec("mptcp", "b", "d2", 5.0),
    ]
    grid = heat_grid(gain_matrix(records))
    assert (grid.y_labels, grid.x_labels) == (["a", "b"], ["d1", "d2"])
    values = grid.values["IPv4"]
    assert values[0, 0] == pytest.approx(math.log(2)) and values[1, 1] == pytest.approx(0.0)
    assert np.isnan(values[0, 1]) and np.isnan(values[1, 0])


def test_no_records_give_an_empty_matrix() -> None:
    assert gain_matrix([]).empty


def test_matrix_warns_when_its_records_mix_settings(tmp_path: Path) -> None:
    """Hosts of one measurement that ran different durations or congestion controls: the
    means of a relation would mix them, so the matrix says so (and nothing when they agree)."""
    from perf_cli import mptcplab

    def line(transport: str, cc: str) -> str:
        asked = {"duration_s": 30.0, "family": None, "congestion": cc, "sndbuf_bytes": 16777216}
        return json.dumps(
            {"host": "h", "family": 4, "transport": transport, "bind": "a", "source": "a",
             "server": "d", "goodput_mbps": 10.0, "requested": asked}
        )  # fmt: skip

    one, other = tmp_path / "one.jsonl", tmp_path / "other.jsonl"
    one.write_text(line("tcp", "reno") + "\n" + line("mptcp", "reno") + "\n")
    other.write_text(line("tcp", "cubic") + "\n")
    out = mptcplab("matrix", str(one))
    assert out.returncode == 0 and "warning" not in out.stderr
    out = mptcplab("matrix", str(one), str(other))
    assert out.returncode == 0, out.stderr
    assert "warning: the records were made with different settings" in out.stderr
    assert "--cc reno" in out.stderr and "--cc cubic" in out.stderr

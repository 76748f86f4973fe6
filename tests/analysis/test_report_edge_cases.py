"""The report and compare on campaigns at their edges: a level that never finishes (infinite
differences and cells), names the user gave that read as markup or mathtext, and variants whose
runs all failed."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import numpy as np
import pytest

from mptcplab.analysis import plots

NEVER_FINISHES = """\
name = "never"
seed = 7
backend = "sim"
replications = 1
metrics = ["completion_s"]

[design]
kind = "wsp"
points = 6

[scenario]
template = "two_path"
duration_s = 3.0
app = { kind = "size", bytes = 1000000 }

[factors.cap0]
low = 5.0
high = 10.0
param = "capacity_mbps[0]"

[factors.rtt0]
low = 20.0
high = 40.0
param = "rtt_ms[0]"

[factors.buf.levels]
auto = { rcvbuf = "auto" }
tiny = { rcvbuf = 3000 }
"""

ODD_NAMES = """\
name = "odd"
seed = 1
backend = "sim"
replications = 2
metrics = ["goodput_mbps"]

[design]
kind = "wsp"
points = 6

[scenario]
template = "two_path"
duration_s = 1.0

[factors."rtt$x$"]
low = 10.0
high = 50.0
param = "rtt_ms[0]"

[factors.cap0]
low = 1.0
high = 10.0
param = "capacity_mbps[0]"

[factors.cc.levels]
"[bold]lia" = { cc = "lia" }
"olia$\\\\frac$" = { cc = "olia" }

[[published]]
source = "Paper [/] X"
label = "Fig [/] 1"
metric = "goodput_mbps"
value = 5.0
tolerance = 1.0
"""


def _run(tmp_path: Path, text: str) -> Path:
    from mptcplab.campaign import load, run_campaign

    path = tmp_path / "campaign.toml"
    path.write_text(text)
    summary = run_campaign(load(path), output=tmp_path / "store.sqlite", progress=False, jobs=2)
    return summary.store


def test_a_level_that_never_finishes_still_gets_its_report(tmp_path: Path) -> None:
    """Every per-point difference is +inf: the figure of differences has no curve to draw and
    the report leaves it out instead of failing; the heat map writes the infinite cells."""
    from mptcplab.analysis.report import build_report
    from mptcplab.analysis.tables import point_medians, to_pandas

    store = _run(tmp_path, NEVER_FINISHES)
    medians = point_medians(to_pandas(store), ["completion_s"])
    tiny = medians[medians["buf"] == "tiny"]["completion_s"]
    auto = medians[medians["buf"] == "auto"]["completion_s"]
    assert (tiny == np.inf).all() and np.isfinite(auto).all()
    html = build_report(store)
    assert "Variants compared point by point" in html and "tiny higher (worse)" in html


def test_the_cdf_of_differences_counts_infinite_ones_among_the_points() -> None:
    """Two finite differences of eight: the curve ends at 2/8, not at 1."""
    steps = plots.difference_steps([1.55, 1.15, *[np.inf] * 6])
    assert steps is not None
    x, y, infinite = steps
    assert infinite == 6 and y[-1] == pytest.approx(2 / 8) and y[0] == 0
    assert list(x) == [1.15, 1.15, 1.55]
    steps = plots.difference_steps([-np.inf, 1.0, 2.0, np.inf])
    assert steps is not None
    _, y, infinite = steps
    assert infinite == 2 and (y[0], y[-1]) == (pytest.approx(1 / 4), pytest.approx(3 / 4))
    assert plots.difference_steps([np.inf, np.inf]) is None


def test_the_heat_map_keeps_an_infinite_median_in_its_cell() -> None:
    import pandas as pd

    from mptcplab.analysis.heatmap import heat_grid

    medians = pd.DataFrame(
        {
            "variant": ["v"] * 8,
            "x": [1, 2, 3, 4, 1, 2, 3, 4],
            "y": [1, 1, 1, 1, 2, 2, 2, 2],
            "t": [1.0, 2.0, np.inf, 3.0, np.inf, np.inf, 5.0, 6.0],
        }
    )
    grid = heat_grid(medians, "t", ["x", "y"], ["v"])
    assert grid is not None
    cells = grid.values["v"]
    assert np.isinf(cells).any() and not np.isnan(cells).all()
    assert int(grid.counts["v"].sum()) == 8  # every point has its cell
    png = plots.heat_map(grid, "s", higher_is_better=False)
    assert png.startswith(b"\x89PNG")


def test_names_that_read_as_markup_or_mathtext_are_shown_as_given(
    tmp_path: Path, cli, monkeypatch: pytest.MonkeyPatch
) -> None:
    from mptcplab.analysis.report import build_report

    store = _run(tmp_path, ODD_NAMES)
    html = build_report(store)  # "$\\frac$" stopped matplotlib
    assert "olia$\\frac$" in html
    monkeypatch.setenv("COLUMNS", "200")
    code, out, err = cli("compare", str(store))
    assert code == 0, err
    assert "[bold]lia" in out  # rich read it as a style and printed "lia"
    code, out, err = cli("report", str(store), "-o", str(tmp_path / "r.html"))
    assert code == 0, err
    assert "Fig [/] 1" in out  # "[/]" stopped the table of published figures


def _fail_runs(store: Path, where: str) -> None:
    with sqlite3.connect(store) as db:
        db.execute(f"UPDATE runs SET status = 'failed', metrics = NULL WHERE {where}")


def test_a_variant_whose_runs_all_failed_keeps_its_row_and_is_named(
    tmp_path: Path, cli, monkeypatch: pytest.MonkeyPatch
) -> None:
    from mptcplab.analysis.report import NOTHING_COMPARED, build_report

    store = _run(tmp_path, NEVER_FINISHES.replace('"completion_s"', '"goodput_mbps"'))
    _fail_runs(store, "variant LIKE '%tiny%'")
    html = build_report(store)
    table = html.split("Percentiles of the per-point medians, by variant", 1)[1]
    assert "buf=tiny" in table.split("</table>", 1)[0]
    assert NOTHING_COMPARED in html
    monkeypatch.setenv("COLUMNS", "300")
    code, out, err = cli("compare", str(store))
    assert code == 0, err
    assert NOTHING_COMPARED in " ".join(out.split())
    _fail_runs(store, "1 = 1")
    code, out, err = cli("compare", str(store))  # it raised on the medians' missing levels
    assert code == 0, err
    assert NOTHING_COMPARED in " ".join(out.split())

"""The HTML report is one self-contained file holding every section."""

from __future__ import annotations

import base64
import re
import sys

from mptcplab import sim
from mptcplab.analysis.tables import alike_replications, to_pandas
from mptcplab.scenario import templates

PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"


def test_report_is_self_contained(report_html) -> None:
    html = report_html
    assert html.startswith("<!DOCTYPE html>")
    # Every attribute that loads or links something stays inside the file.
    for attribute in re.findall(r"""\b(?:src|href)\s*=\s*["']([^"']*)["']""", html):
        assert attribute.startswith(("data:image/png;base64,", "#")), attribute
    lowered = html.lower()
    for external in ("http://", "https://", "<script", "<link", "@import", "url("):
        assert external not in lowered, external
    images = re.findall(r'src="data:image/png;base64,([^"]+)"', html)
    # Per metric: the differences between levels, distribution, against-factors and heat-map
    # figures.
    assert len(images) == 4 * 5
    for data in images:
        assert base64.b64decode(data).startswith(PNG_SIGNATURE)


def test_report_has_every_section(report_html) -> None:
    html = report_html
    for section in (
        "campaign",
        "design",
        "metric-path0-share",
        "metric-aggregation-benefit",
        "metric-aggregation-benefit-measured",
        "metric-goodput-mbps",
        "metric-log-gain",
        "critical",
        "sensitivity",
        "provenance",
    ):
        assert f'id="{section}"' in html, section
        assert f'href="#{section}"' in html, section
    # The campaign file itself, the design-quality measures, the worst points with their factor
    # values, the sensitivity percentiles, the provenance columns.
    assert "a small two-path study for the analysis tests" in html
    assert "[factors.cap0]" in html
    for word in ("mindist", "phi_p", "coverage", "cd2"):
        assert f"<th>{word}</th>" in html
    critical = html[html.index('id="critical"') : html.index('id="sensitivity"')]
    for column in ("cap0", "rtt1", "variant", "aggregation_benefit"):
        assert f"<th>{column}</th>" in critical
    # path0_share, listed first, is a split with no worse end: the next metric ranks the points.
    assert "lowest median <code>aggregation_benefit</code>" in critical
    sensitivity = html[html.index('id="sensitivity"') : html.index('id="provenance"')]
    for column in ("p5", "p25", "p50", "p75", "p95"):
        assert f"<th>{column}</th>" in sensitivity
    provenance = html[html.index('id="provenance"') :]
    for column in ("mptcplab", "git revision", "backend", "host", "started", "ended"):
        assert f"<th>{column}</th>" in provenance
    assert "cc=lia" in html and "cc=olia" in html
    # Two quantitative factors: every metric's heat map is drawn over both.
    assert html.count("<h3>Heat map over ") == 5
    # One qualitative factor of two levels: one paired comparison per metric.
    assert html.count("<h3>Variants compared point by point</h3>") == 5
    # Its 8 points are enough for an interval: the differences' distribution is drawn too.
    assert html.count(": per-point differences between levels") == 5
    goodput = html[html.index('id="metric-goodput-mbps"') : html.index('id="metric-log-gain"')]
    assert "<th>median difference</th>" in goodput and "<td>lia</td>" in goodput


def test_report_command_writes_the_file(
    analysis_store, report_html, tmp_path, monkeypatch, capsys
) -> None:
    from mptcplab import cli

    out = tmp_path / "report.html"
    monkeypatch.setattr(sys, "argv", ["mptcplab", "report", str(analysis_store), "-o", str(out)])
    try:
        cli.main()
    except SystemExit as exc:
        assert not exc.code
    assert out.read_text(encoding="utf-8") == report_html
    assert str(out) in capsys.readouterr().err


def test_report_of_a_missing_store_is_a_user_error(tmp_path, monkeypatch, capsys) -> None:
    from mptcplab import cli

    monkeypatch.setattr(sys, "argv", ["mptcplab", "report", str(tmp_path / "no.sqlite")])
    try:
        cli.main()
    except SystemExit as exc:
        assert exc.code == 2
    assert "no store at" in capsys.readouterr().err


def test_a_results_folder_given_for_its_store_names_the_store(tmp_path, monkeypatch, capsys):
    from mptcplab import cli
    from mptcplab.campaign import Store

    Store(tmp_path / "store.sqlite", create=True).close()
    monkeypatch.setattr(sys, "argv", ["mptcplab", "status", str(tmp_path)])
    try:
        cli.main()
    except SystemExit as exc:
        assert exc.code == 2
    assert f"{tmp_path} is a folder; its store is {tmp_path / 'store.sqlite'}" in (
        capsys.readouterr().err
    )


def test_critical_points_are_the_worst_for_the_metric() -> None:
    import pandas as pd

    from mptcplab.analysis.report import _critical_section

    medians = pd.DataFrame(
        {
            "variant": ["a"] * 3,
            "design": [0] * 3,
            "point": [0, 1, 2],
            "peak_rcvbuf_bytes": [100.0, 5000.0, 300.0],
            "aggregation_benefit": [0.9, 0.1, 0.5],
            "replications": [1] * 3,
        }
    )
    # A receiver holding the most memory is the critical case; for the benefit, the lowest.
    html = _critical_section(medians, ["peak_rcvbuf_bytes"])
    assert "highest median" in html
    assert html.index("5000") < html.index("300") < html.index("100")
    html = _critical_section(medians, ["aggregation_benefit"])
    assert "lowest median" in html
    assert html.index("0.1") < html.index("0.5") < html.index("0.9")


def test_critical_rows_of_several_variants_are_not_called_design_points() -> None:
    import pandas as pd

    from mptcplab.analysis.report import _critical_section

    # Two variants at two points: four rows, the same two points twice.
    medians = pd.DataFrame(
        {
            "variant": ["a", "a", "b", "b"],
            "design": [0] * 4,
            "point": [0, 1, 0, 1],
            "aggregation_benefit": [0.9, 0.1, 0.5, 0.3],
            "replications": [1] * 4,
        }
    )
    html = _critical_section(medians, ["aggregation_benefit"])
    assert "The 4 pairs of design point and variant with the lowest median" in html
    one = _critical_section(medians[medians["variant"] == "a"].head(1), ["aggregation_benefit"])
    assert "The 1 design point with the lowest median" in one


def test_critical_section_needs_a_metric_with_a_worse_end() -> None:
    import pandas as pd

    from mptcplab.analysis.report import _critical_section

    medians = pd.DataFrame({"variant": ["a", "b"], "point": [0, 1], "path0_share": [0.2, 0.7]})
    html = _critical_section(medians, ["path0_share"])
    assert "none of the metrics has a better or worse end" in html
    assert "<table" not in html


def test_points_where_mptcp_loses_are_counted_in_nornets_classes() -> None:
    import math
    import re
    from html import unescape

    import pandas as pd

    from mptcplab.analysis.report import _critical_section

    ratios = [1.2, 0.99, 0.9, 0.8, 0.6, 0.3]  # 0.99 is within the 2.5 % MPTCP overhead
    medians = pd.DataFrame(
        {
            "variant": ["a"] * len(ratios),
            "design": [0] * len(ratios),
            "point": range(len(ratios)),
            "log_gain": [math.log(r) for r in ratios],
            "replications": [1] * len(ratios),
        }
    )
    html = _critical_section(medians, ["log_gain"])
    table = html[html.index("Points where MPTCP does worse") :]
    header = ["variant", "points", "MPTCP < 97.5 % of TCP", "of which ≥ 80 %", "50–80 %", "< 50 %"]
    assert [unescape(h) for h in re.findall(r"<th>(.*?)</th>", table)] == header
    assert re.findall(r"<td>(.*?)</td>", table) == ["a", "6", "4", "2", "1", "1"]


def test_the_report_says_how_far_it_is_and_is_the_same(analysis_store, report_html) -> None:
    from mptcplab.analysis.report import build_report

    heard: list[tuple[str, int, int]] = []
    html = build_report(analysis_store, progress=lambda *a: heard.append(a))
    assert html == report_html
    titles = [title for title, _, _ in heard]
    assert titles[0] == "Campaign" and titles[-1] == "writing"
    assert "goodput_mbps" in titles and "Critical configurations" in titles
    assert [done for _, done, _ in heard] == list(range(len(heard)))
    assert {total for _, _, total in heard} == {len(heard) - 1}


def test_the_report_says_when_every_replication_repeats_one_run(analysis_store, report_html):
    """The analysis campaign's two-path scenario has no random loss, RED or jitter: another seed
    gives the same run (the oracle: two seeds' reports), so every point's two replications are
    alike and the report says one would give the same figures. One differing run is seen."""
    scenario = templates.make("two_path", duration_s=2.0, capacity_mbps=[1.0, 4.0])
    first, second = (sim.run(scenario.model_copy(update={"seed": s})) for s in (1, 2))
    assert first.flows == second.flows and first.links == second.links
    runs = to_pandas(analysis_store)
    metrics = ["goodput_mbps", "aggregation_benefit", "path0_share"]
    alike, repeated = alike_replications(runs, metrics)
    assert alike == repeated == 2 * 4 * 2  # designs × points × congestion controls
    assert f"At {alike} of the {repeated} design points and variants run more than once" in (
        report_html
    )
    changed = runs.copy()
    main = changed.index[(changed["role"] == "main") & (changed["status"] == "done")]
    changed.loc[main[0], "goodput_mbps"] += 1.0
    assert alike_replications(changed, metrics) == (repeated - 1, repeated)

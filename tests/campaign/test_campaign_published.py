"""A campaign carrying published figures: run on the simulator, the report and `mptcplab report`
set each figure beside the median of the runs at its settings."""

from __future__ import annotations

import html
import re

import pytest

from mptcplab.analysis.metrics import PAYLOAD_FRACTION

# A 2 × 2 factorial over path 0's capacity (log scale: its corners go through exp/log) and the
# congestion control; one MPTCP user over two disjoint paths, path 1 at 4 Mbit/s.
CAMPAIGN = """\
name = "published"
seed = 3
replications = 2
metrics = ["goodput_mbps"]

[design]
kind = "factorial"
options = { levels = 2 }

[scenario]
template = "two_path"
duration_s = 2.0
capacity_mbps = [1.0, 4.0]

[factors.cap0]
low = 2.0
high = 8.0
log = true
param = "capacity_mbps[0]"

[factors.cc]
levels = ["lia", "olia"]

[[published]]
source = "pooling, by hand"
label = "fair share at 2 + 4 Mbit/s"
metric = "fair_share_mbps.flow"
at = { cap0 = 2, cc = "olia" }
value = {low_share}
tolerance = 1e-9

[[published]]
source = "pooling, by hand"
metric = "fair_share_mbps.flow"
at = { cap0 = 8.0 }
value = 1.0
tolerance = 0.5

[[published]]
source = "pooling, by hand"
label = "fair share at 8 + 4 over 2 + 4"
metric = "fair_share_mbps.flow"
at = { cap0 = 8.0 }
relative_to = { cap0 = 2 }
value = 2.0
tolerance = 1e-9

[[published]]
source = "nobody's paper"
label = "goodput above both links"
metric = "user_goodput_mbps.flow"
at = { cc = "lia" }
value = 1000.0
"""


@pytest.fixture(autouse=True)
def _in_tmp(tmp_path, monkeypatch) -> None:
    # The store goes to results/<name> under the working directory.
    monkeypatch.chdir(tmp_path)


@pytest.fixture
def campaign_file(write_campaign):
    # One user over disjoint 2 and 4 Mbit/s paths: its max-min fair share is their sum, in
    # payload; at 8 + 4 it is 12 × 1448/1500.
    return write_campaign(CAMPAIGN.replace("{low_share}", repr(6.0 * PAYLOAD_FRACTION)))


def test_the_report_sets_each_published_figure_beside_our_runs(campaign_file, cli) -> None:
    code, out, err = cli("run", str(campaign_file), "-q")
    assert code == 0, err
    assert "published results beside ours" in out and "fair share at 2 + 4 Mbit/s" in out
    out_html = campaign_file.parent / "report.html"
    code, out, err = cli("report", str(campaign_file), "-o", str(out_html))
    assert code == 0, err

    # The terminal table: one row per figure, the second named by its metric and settings.
    assert "published results beside ours" in out
    lines = [line for line in out.splitlines() if "│" in line or "  " in line]
    text = "\n".join(lines)
    assert re.search(r"fair share at 2 \+ 4 Mbit/s\s+5\.792\s+5\.792\s+2\s", text), out
    assert "yes (±1e-09)" in out
    # 12 × 1448/1500 = 11.584 against 1 ± 0.5, over the 4 runs at cap0 = 8 (both cc levels).
    assert re.search(r"fair_share_mbps\.flow at\s+cap0=8\.0\s+1\s+11\.58\s+4\s", text), out
    assert "no (±0.5)" in out
    # A ratio, whatever the unit: 12 over 6 Mbit/s of links, each in payload, is 2.
    assert re.search(r"fair share at 8 \+ 4 over 2 \+ 4\s+2\s+2\s+4\s", text), out
    # The goodput over 2 + 4 or 8 + 4 Mbit/s links cannot reach 1000.
    row = next(line for line in out.splitlines() if "goodput above both links" in line)
    assert re.search(
        r"goodput above both links\s+1000\s+[\d.]+\s+4\s+[\d.]+ – [\d.]+\s+-9\d\d\s", row
    )

    page = html.unescape(out_html.read_text())
    assert 'id="published"' in page and "Published results beside ours" in page
    assert "pooling, by hand" in page and "nobody's paper" in page
    assert "cap0=2, cc=olia" in page and "cap0=8.0, relative to cap0=2" in page


def test_a_campaign_without_published_figures_prints_no_table(write_campaign, cli) -> None:
    path = write_campaign(CAMPAIGN[: CAMPAIGN.index("[[published]]")])
    code, out, _ = cli("run", str(path), "-q")
    assert code == 0 and "published" not in out.lower()
    code, out, _ = cli("report", str(path), "-o", str(path.parent / "r.html"))
    assert code == 0 and "published" not in out.lower()
    assert 'id="published"' not in (path.parent / "r.html").read_text()

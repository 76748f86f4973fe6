"""Reference runs in a network with other traffic: the single-path TCP flow that takes the MPTCP
flow's place shares its path with the others, and what it gets — not the path's total — is the
C_i of the measured aggregation benefit (Kaspar; Paasch et al., CoNEXT 2013 §4.1) and the
reference of the log gain (NorNet, Dreibholz et al.)."""

from __future__ import annotations

import math
from pathlib import Path

import pytest

from mptcplab import sim
from mptcplab.analysis import to_pandas

if not sim.available():  # pragma: no cover - the build always provides it
    pytest.skip("the simulator extension is not built (make build)", allow_module_level=True)

PAYLOAD = 1448 / 1500

NETWORK = """\
duration_s = 20.0
warmup_s = 4.0
seed = 1
[[links]]
id = "a"
capacity_mbps = 10.0
delay_ms = 10.0
queue = { kind = "droptail", ms = 40 }
[[links]]
id = "b"
capacity_mbps = 4.0
delay_ms = 10.0
queue = { kind = "droptail", ms = 40 }
[[flows]]
id = "mp"
protocol = "mptcp"
cc = "lia"
paths = [["a"], ["b"]]
[[flows]]
id = "cross"
protocol = "tcp"
cc = "reno"
paths = [["a"]]
"""

CAMPAIGN = """\
name = "cross-traffic"
seed = 3
replications = 1
reference_runs = true
metrics = ["aggregation_benefit_measured", "log_gain", "mptcp_goodput_mbps"]

[design]
kind = "factorial"

[scenario]
file = "{network}"

[factors.cc]
levels = ["lia"]
param = "flows[mp].cc"
"""


def _benefit(goodput: float, capacities: list[float]) -> float:
    # Kaspar's aggregation benefit, written out: below the best path, the shortfall relative
    # to it; above, the share of what the other paths could add.
    best, total = max(capacities), sum(capacities)
    if goodput < best:
        return (goodput - best) / best
    return (goodput - best) / (total - best)


def test_the_reference_is_the_flow_in_the_mptcp_flows_place(tmp_path: Path) -> None:
    from mptcplab.campaign import load, run_campaign

    network = tmp_path / "network.toml"
    network.write_text(NETWORK)
    campaign = tmp_path / "campaign.toml"
    campaign.write_text(CAMPAIGN.format(network=network))
    store = tmp_path / "store.sqlite"
    run_campaign(load(campaign), output=store, jobs=1, progress=False)

    every = to_pandas(store, references=True)
    refs = every[every["role"] == "reference"].sort_values("path")
    mine = refs["group_goodput_mbps.mp"].tolist()
    # Path a: two Reno flows on 10 Mbit/s, about half each; path b: the 4 Mbit/s link alone.
    assert mine[0] <= 0.7 * 10.0 * PAYLOAD, mine
    assert refs["goodput_mbps"].iloc[0] >= 0.9 * 10.0 * PAYLOAD  # both flows on a together
    assert mine[1] == pytest.approx(4.0 * PAYLOAD, rel=0.1)

    main = every[every["role"] == "main"].iloc[0]
    mptcp = main["mptcp_goodput_mbps"]
    assert main["aggregation_benefit_measured"] == pytest.approx(_benefit(mptcp, mine))
    assert main["log_gain"] == pytest.approx(math.log(mptcp / max(mine)))
    # Against the paths' totals (cross traffic counted in) MPTCP would look worse than TCP.
    assert main["aggregation_benefit_measured"] > _benefit(mptcp, refs["goodput_mbps"].tolist())

"""From a campaign file to runs: factor values reach the right template parameters, variants
share points and seeds, seeds and run keys are deterministic."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections import defaultdict
from pathlib import Path

import pytest
from campaign_cases import SMALL_CAMPAIGN

from mptcplab.campaign import build_plan, load
from mptcplab.errors import UserError

BACKEND = {"backend": "sim", "backend_version": "test"}


@pytest.fixture
def plan(write_campaign):
    return build_plan(load(write_campaign()), **BACKEND)


def test_run_count_is_points_times_variants_times_replications(plan) -> None:
    assert len(plan.tasks) == 3 * 2 * 2
    assert len(plan.unique_runs()) == 12


def test_factor_values_reach_the_mapped_template_parameters(plan) -> None:
    for task in plan.tasks:
        row, scenario = task.row, task.scenario
        links = {link["id"]: link for link in scenario["links"]}
        assert 1.0 <= row.factors["cap0"] <= 20.0
        assert 1.0 <= row.factors["cap1"] <= 20.0
        assert links["path0"]["capacity_mbps"] == row.factors["cap0"]
        assert links["path1"]["capacity_mbps"] == row.factors["cap1"]
        # two_path documents one-way delay = rtt_ms / 2 (fixed rtt_ms = [10, 30])
        assert links["path0"]["delay_ms"] == 5.0
        assert links["path1"]["delay_ms"] == 15.0
        assert scenario["flows"][0]["cc"] == row.variant["cc"]
        assert scenario["duration_s"] == 1.0
        assert scenario["seed"] == row.seed


def test_variants_share_points_and_seeds(plan) -> None:
    by_point = defaultdict(list)
    for task in plan.tasks:
        row = task.row
        by_point[(row.design, row.point, row.replication)].append(row)
    for rows in by_point.values():
        assert sorted(r.variant["cc"] for r in rows) == ["lia", "olia"]
        assert len({json.dumps(r.factors, sort_keys=True) for r in rows}) == 1
        assert len({r.seed for r in rows}) == 1
        assert len({r.run_key for r in rows}) == 2
    seeds = {(k[1], k[2]): rows[0].seed for k, rows in by_point.items()}
    assert len(set(seeds.values())) == len(seeds), "points and replications get distinct seeds"


def test_seeds_follow_the_campaign_seed(write_campaign) -> None:
    first = build_plan(load(write_campaign()), **BACKEND)
    again = build_plan(load(write_campaign()), **BACKEND)
    other = build_plan(
        load(write_campaign(SMALL_CAMPAIGN.replace("seed = 11", "seed = 12"), "other.toml")),
        **BACKEND,
    )
    assert [t.row.seed for t in first.tasks] == [t.row.seed for t in again.tasks]
    assert [t.row.run_key for t in first.tasks] == [t.row.run_key for t in again.tasks]
    assert not {t.row.seed for t in first.tasks} & {t.row.seed for t in other.tasks}
    assert all(0 <= t.row.seed < 2**63 for t in first.tasks)


def test_plan_is_identical_in_another_process(write_campaign, plan) -> None:
    """No dependence on hash randomisation or process state."""
    path = write_campaign()
    code = (
        "import json, sys\n"
        "from mptcplab.campaign import build_plan, load\n"
        f"p = build_plan(load({str(path)!r}), backend='sim', backend_version='test')\n"
        "print(json.dumps([[t.row.run_key, t.row.seed, t.row.factors] for t in p.tasks]))\n"
    )
    env = {**os.environ, "PYTHONHASHSEED": "12345"}
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, env=env
    ).stdout
    here = [[t.row.run_key, t.row.seed, t.row.factors] for t in plan.tasks]
    assert json.loads(out) == json.loads(json.dumps(here))


def test_run_keys_change_with_the_backend_version(write_campaign) -> None:
    campaign = load(write_campaign())
    a = build_plan(campaign, backend="sim", backend_version="1")
    b = build_plan(campaign, backend="sim", backend_version="2")
    assert not set(a.unique_runs()) & set(b.unique_runs())


def test_reference_runs_are_single_path_tcp_shared_by_cc_variants(write_campaign) -> None:
    text = SMALL_CAMPAIGN.replace(
        'metrics = ["aggregation_benefit", "goodput_mbps"]',
        'metrics = ["aggregation_benefit_measured"]\nreference_runs = true',
    )
    plan = build_plan(load(write_campaign(text)), **BACKEND)
    tasks = {t.row.run_key: t for t in plan.tasks}
    mains = [t for t in plan.tasks if t.row.role == "main"]
    assert len(mains) == 12
    for main in mains:
        keys = main.row.reference_keys
        assert keys is not None and len(keys) == 2
        for path_index, key in enumerate(keys):
            reference = tasks[key]
            assert reference.row.role == "reference"
            assert reference.row.path == path_index
            (flow,) = reference.scenario["flows"]
            assert flow["protocol"] == "tcp"
            assert flow["cc"] == "reno"
            assert flow["paths"] == [main.scenario["flows"][0]["paths"][path_index]]
            assert reference.scenario["links"] == main.scenario["links"]
            assert reference.scenario["seed"] == main.scenario["seed"]
    # LIA and OLIA runs of one point and replication share their TCP references.
    by_point = defaultdict(set)
    for main in mains:
        by_point[(main.row.point, main.row.replication)].add(tuple(main.row.reference_keys))
    assert all(len(keys) == 1 for keys in by_point.values())
    assert len(plan.unique_runs()) == 12 + 3 * 2 * 2


def test_integer_factor_gets_integers(write_campaign) -> None:
    text = SMALL_CAMPAIGN.replace(
        '[factors.cc]\nlevels = ["lia", "olia"]',
        '[factors.rcvbuf]\nkind = "integer"\nlow = 20000\nhigh = 400000',
    )
    plan = build_plan(load(write_campaign(text)), **BACKEND)
    for task in plan.tasks:
        value = task.row.factors["rcvbuf"]
        assert isinstance(value, int) and 20000 <= value <= 400000
        assert task.scenario["flows"][0]["rcvbuf_bytes"] == value


def test_a_designs_unit_points_are_those_of_the_values_it_runs(write_campaign) -> None:
    """An integer factor of three values (a receive buffer of 100,000-100,002 bytes) over a
    20-point WSP design: each point's unit coordinate is its value's, (value − 100,000 + ½) / 3,
    not the unrounded draw, so the design's quality is that of the design run."""
    text = SMALL_CAMPAIGN.replace('kind = "lhs"\npoints = 3', 'kind = "wsp"\npoints = 20').replace(
        '[factors.cc]\nlevels = ["lia", "olia"]',
        '[factors.buf]\nkind = "integer"\nlow = 100000\nhigh = 100002\nparam = "rcvbuf"',
    )
    (design,) = build_plan(load(write_campaign(text)), **BACKEND).designs
    j = design.factor_names.index("buf")
    values = [point["buf"] for point in design.values]
    assert set(values) == {100_000, 100_001, 100_002}
    assert design.unit_points[:, j].tolist() == [(v - 100_000 + 0.5) / 3 for v in values]
    cap = design.factor_names.index("cap1")
    assert [1 + 19 * u for u in design.unit_points[:, cap]] == pytest.approx(
        [point["cap1"] for point in design.values]
    )


def test_k_designs_are_independent(write_campaign) -> None:
    text = SMALL_CAMPAIGN.replace("points = 3", "points = 3\ndesigns = 2")
    plan = build_plan(load(write_campaign(text)), **BACKEND)
    assert [d.index for d in plan.designs] == [0, 1]
    assert plan.designs[0].values != plan.designs[1].values
    assert len(plan.unique_runs()) == 2 * 12


CAMPAIGNS = Path(__file__).resolve().parents[2] / "campaigns"


@pytest.mark.parametrize("path", sorted(CAMPAIGNS.glob("*.toml")), ids=lambda p: p.name)
def test_every_shipped_campaign_loads_plans_and_is_in_the_readme(path: Path) -> None:
    plan = build_plan(load(path), **BACKEND)
    assert plan.unique_runs()
    assert f"`{path.name}`" in (CAMPAIGNS.parent / "README.md").read_text()


@pytest.mark.parametrize(
    ("name", "points", "replications", "runs"),
    [
        # points × 4 variants × replications MPTCP runs + points × 2 buffers × replications × 2
        # paths single-path TCP references (shared by LIA and OLIA)
        ("quickstart.toml", 50, 5, 50 * 4 * 5 + 50 * 2 * 5 * 2),
        ("conext13-lowbdp.toml", 200, 5, 200 * 4 * 5 + 200 * 2 * 5 * 2),
        ("conext13-highbdp.toml", 200, 5, 200 * 4 * 5 + 200 * 2 * 5 * 2),
    ],
)
def test_shipped_campaigns_plan_the_study(name, points, replications, runs) -> None:
    campaign = load(CAMPAIGNS / name)
    assert campaign.spec.replications == replications
    plan = build_plan(campaign, **BACKEND)
    assert [len(d.values) for d in plan.designs] == [points]
    assert len(plan.unique_runs()) == runs
    high_bdp = "highbdp" in name
    for task in plan.tasks[:: max(1, len(plan.tasks) // 50)]:
        for link in task.scenario["links"]:
            assert 0.1 <= link["capacity_mbps"] <= 100.0
            assert 0.0 <= 2 * link["delay_ms"] <= (400.0 if high_bdp else 50.0)
            # Queuing delay of the full buffer: whole 1500-byte packets behind the one sent.
            packet_ms = 1500 * 8 / (link["capacity_mbps"] * 1e3)
            wait_ms = (link["queue"]["packets"] - 1) * packet_ms
            assert 0.0 <= wait_ms <= (2000.0 if high_bdp else 100.0) + packet_ms / 2


def test_the_balancing_campaign_spans_nine_dimensions_over_the_ring() -> None:
    campaign = load(CAMPAIGNS / "conext13-balancing.toml")
    plan = build_plan(campaign, **BACKEND)
    # 400 WSP points × LIA, OLIA, uncoupled Reno × 5 replications, no reference runs.
    assert [len(d.values) for d in plan.designs] == [400]
    assert len(plan.designs[0].values[0]) == 9
    assert len(plan.unique_runs()) == 400 * 3 * 5
    for task in plan.tasks[:: max(1, len(plan.tasks) // 50)]:
        links = {link["id"]: link for link in task.scenario["links"]}
        assert sorted(links) == ["bottleneck0", "bottleneck1", "bottleneck2"]
        for link in links.values():
            assert 0.1 <= link["capacity_mbps"] <= 100.0
            assert 0.0 <= 2 * link["delay_ms"] <= 50.0
        for i, flow in enumerate(sorted(task.scenario["flows"], key=lambda f: f["id"])):
            one_hop, two_hop = flow["paths"]
            assert one_hop == [f"bottleneck{i}"] and f"bottleneck{i}" not in two_hop
            assert len(two_hop) == 2


def test_a_plan_without_versions_asks_the_campaigns_backend(write_campaign) -> None:
    from mptcplab.campaign.backends import BACKENDS

    campaign = load(write_campaign())
    version = BACKENDS["sim"].version_string()
    plan = build_plan(campaign)
    assert [t.row.run_key for t in plan.tasks] == [
        t.row.run_key for t in build_plan(campaign, backend="sim", backend_version=version).tasks
    ]
    with pytest.raises(TypeError, match="together"):
        build_plan(campaign, backend="sim")


def test_the_scenario_c_campaign_spreads_n1_and_c1_around_the_drafts_points() -> None:
    campaign = load(CAMPAIGNS / "khalili-scenario-c.toml")
    plan = build_plan(campaign, **BACKEND)
    # 20 points × 3 congestion controls × 3 replications, no reference runs.
    assert len(plan.unique_runs()) == 20 * 3 * 3
    for task in plan.tasks:
        caps = {link["id"]: link["capacity_mbps"] for link in task.scenario["links"]}
        counts = {flow["id"]: flow["count"] for flow in task.scenario["flows"]}
        assert counts["singlepath"] == 10 and caps["ap2"] == pytest.approx(10.0)
        assert 5 <= counts["multipath"] <= 40
        assert 0.5 <= caps["ap1"] / counts["multipath"] <= 2.0
        # The draft's set-up: 110 ms of propagation (150 ms with the queues), and OLIA with its
        # one-segment ssthresh floor.
        assert all(link["delay_ms"] == pytest.approx(55.0) for link in task.scenario["links"])
        multipath = next(f for f in task.scenario["flows"] if f["id"] == "multipath")
        # The others keep their own floor (LIA Linux's 2, BALIA its 1).
        floor = 1 if multipath["cc"] == "olia" else None
        assert multipath.get("tcp", {}).get("min_ssthresh_segments") == floor


# draft-khalili-mptcp-performance-issues-06 as spec §5.4 transcribes it: measured per-user
# goodput (Mbit/s) by (N1, column): (type-1 or multipath users, type-2 or single-path users).
KHALILI_TABLES = {
    "reproduce-khalili-a.toml": {
        (10, "single-path"): (0.98, 0.98),
        (10, "lia"): (0.96, 0.70),
        (10, "olia"): (0.98, 0.86),
        (30, "single-path"): (0.98, 0.98),
        (30, "lia"): (0.98, 0.44),
        (30, "olia"): (0.98, 0.75),
    },
    "reproduce-khalili-c.toml": {
        (10, "lia"): (1.30, 0.68),
        (10, "olia"): (1.11, 0.88),
        (30, "lia"): (1.19, 0.38),
        (30, "olia"): (1.10, 0.72),
    },
}


# The draft's fixed-point predictions for LIA as spec §5.4 transcribes them, by N1: (type-1 or
# multipath users, type-2 or single-path users).
KHALILI_ANALYSIS = {
    "reproduce-khalili-a.toml": {10: (1.0, 0.74), 30: (1.0, 0.50)},
    "reproduce-khalili-c.toml": {10: (1.3, 0.7), 30: (1.17, 0.48)},
}


# The draft's "opt. w/ probing" columns as spec §5.4 transcribes them, by (N1, class).
KHALILI_PROBING = {
    "reproduce-khalili-a.toml": {
        (10, "type1"): 1.0,
        (10, "type2"): 0.94,
        (30, "type1"): 1.0,
        (30, "type2"): 0.8,
    },
    "reproduce-khalili-c.toml": {
        (10, "multipath"): 1.04,
        (10, "singlepath"): 0.94,
        (30, "multipath"): 1.04,
        (30, "singlepath"): 0.8,
    },
}


@pytest.mark.parametrize("name", list(KHALILI_TABLES))
def test_the_reproduction_campaigns_carry_the_drafts_tables(name) -> None:
    campaign = load(CAMPAIGNS / name)
    plan = build_plan(campaign, **BACKEND)
    table = KHALILI_TABLES[name]
    # Every column at N1 = 10 and 30, 5 replications (the draft's 5 measurements).
    assert len(plan.unique_runs()) == len(table) * 5
    classes = ("type1", "type2") if "-a" in name else ("multipath", "singlepath")
    column = "type1" if "-a" in name else "cc"
    goodputs = [e for e in campaign.spec.published if e.metric.startswith("user_goodput_mbps.")]
    measured = {
        (e.at["n1"], e.at[column], e.metric): e.value
        for e in goodputs
        if e.source.endswith(", measured") and not e.relative_to
    }
    assert measured == {
        (n1, col, f"user_goodput_mbps.{cls}"): values[i]
        for (n1, col), values in table.items()
        for i, cls in enumerate(classes)
    }
    # Scenario A's MPTCP figures over its single-path ones, to three places.
    ratios = {(e.at["n1"], e.at[column], e.metric): e.value for e in goodputs if e.relative_to}
    assert all(e.relative_to == {"type1": "single-path"} for e in goodputs if e.relative_to)
    assert ratios == {
        key: round(value / measured[(key[0], "single-path", key[2])], 3)
        for key, value in measured.items()
        if "-a" in name and key[1] != "single-path"
    }
    analysis = {
        (e.at["n1"], e.at[column], e.metric): e.value
        for e in goodputs
        if "fixed-point analysis" in e.source
    }
    assert analysis == {
        (n1, "lia", f"user_goodput_mbps.{cls}"): values[i]
        for n1, values in KHALILI_ANALYSIS[name].items()
        for i, cls in enumerate(classes)
    }
    optimum = [e for e in campaign.spec.published if e.metric.startswith("fair_share_mbps.")]
    assert sorted((e.at["n1"], e.metric) for e in optimum) == sorted(
        (n1, f"fair_share_mbps.{cls}") for n1 in (10, 30) for cls in classes
    )
    assert all(e.value == 1.0 for e in optimum)
    probing = {
        (e.at["n1"], e.metric.split(".")[1]): e.value
        for e in campaign.spec.published
        if e.metric.startswith("fair_share_probing_mbps.")
    }
    assert probing == KHALILI_PROBING[name]
    for task in plan.tasks:
        # The draft's set-up: N2 = 10 users of 1 Mbit/s, 110 ms of propagation (150 ms with
        # the queues), OLIA with its one-segment ssthresh floor.
        counts = {flow["id"]: flow["count"] for flow in task.scenario["flows"]}
        assert counts[classes[1]] == 10 and counts[classes[0]] == int(task.row.variant["n1"])
        delays = {link["id"]: link["delay_ms"] for link in task.scenario["links"]}
        for flow in task.scenario["flows"]:
            for path in flow["paths"]:
                assert 2 * sum(delays[hop] for hop in path) == pytest.approx(110.0)
        mptcp = [f for f in task.scenario["flows"] if f["protocol"] == "mptcp"]
        for flow in mptcp:
            floor = 1 if flow["cc"] == "olia" else None
            assert flow.get("tcp", {}).get("min_ssthresh_segments") == floor


def test_the_scenario_b_campaign_runs_the_drafts_four_columns_at_the_cut_set_share() -> None:
    campaign = load(CAMPAIGNS / "reproduce-khalili-b.toml")
    plan = build_plan(campaign, **BACKEND)
    # Red single-path or multipath × LIA or OLIA, 5 replications (the draft's 5 measurements).
    assert len(plan.unique_runs()) == 4 * 5
    assert {(t.row.variant["red"], t.row.variant["cc"]) for t in plan.tasks} == {
        (red, cc) for red in ("single-path", "multipath") for cc in ("lia", "olia")
    }
    # The cut X + T = 27 + 36 Mbit/s over 15 Blue and 15 Red users.
    assert {(e.metric, e.value) for e in campaign.spec.published} == {
        ("fair_share_mbps.blue", 63 / 30),
        ("fair_share_mbps.red", 63 / 30),
    }
    for task in plan.tasks:
        caps = {link["id"]: link["capacity_mbps"] for link in task.scenario["links"]}
        assert caps == {"X": 27.0, "Y": 100.0, "Z": 100.0, "T": 36.0}
        flows = {flow["id"]: flow for flow in task.scenario["flows"]}
        assert flows["blue"]["count"] == flows["red"]["count"] == 15
        red_paths = len(flows["red"]["paths"])
        assert red_paths == (2 if task.row.variant["red"] == "multipath" else 1)
        delays = {link["id"]: link["delay_ms"] for link in task.scenario["links"]}
        for flow in flows.values():
            for path in flow["paths"]:
                assert 2 * sum(delays[hop] for hop in path) == pytest.approx(110.0)
            if flow["protocol"] == "mptcp":
                floor = 1 if flow["cc"] == "olia" else None
                assert flow.get("tcp", {}).get("min_ssthresh_segments") == floor


# draft-walid-mptcp-congestion-control-04 §5.1 Table 1 as spec §2.6 transcribes it: aggregate
# throughput of each group (Mbit/s), by (population, column): (type-1, type-2).
BALIA_TABLE = {
    ("N1=5", "single-path"): (9.47, 9.29),
    ("N1=5", "lia"): (9.26, 7.55),
    ("N1=5", "olia"): (9.25, 8.13),
    ("N1=5", "balia"): (9.25, 8.32),
    ("N1=15", "single-path"): (9.39, 9.29),
    ("N1=15", "lia"): (8.96, 6.94),
    ("N1=15", "olia"): (8.93, 7.41),
    ("N1=15", "balia"): (9.02, 7.98),
}


def test_the_balia_campaign_carries_the_drafts_table_on_two_10_mbps_links() -> None:
    campaign = load(CAMPAIGNS / "reproduce-balia-a.toml")
    plan = build_plan(campaign, **BACKEND)
    assert len(plan.unique_runs()) == len(BALIA_TABLE) * 5
    published = {
        (e.at["population"], e.at["type1"], e.metric): e.value for e in campaign.spec.published
    }
    assert published == {
        (pop, col, f"group_goodput_mbps.{cls}"): values[i]
        for (pop, col), values in BALIA_TABLE.items()
        for i, cls in enumerate(("type1", "type2"))
    }
    for task in plan.tasks:
        # C1 = C2 = 10 Mbit/s whatever N1; N2 = 5; BALIA with its own (Linux) ssthresh floor.
        caps = {link["id"]: link["capacity_mbps"] for link in task.scenario["links"]}
        counts = {flow["id"]: flow["count"] for flow in task.scenario["flows"]}
        assert caps["server"] == pytest.approx(10.0) and caps["ap"] == pytest.approx(10.0)
        assert counts["type2"] == 5 and counts["type1"] == int(task.row.variant["population"][3:])
        for flow in task.scenario["flows"]:
            assert "min_ssthresh_segments" not in flow.get("tcp", {})


def test_the_responsiveness_campaign_carries_the_drafts_table_2() -> None:
    # draft-walid-mptcp-congestion-control-04 §5.2 Table 2 as spec §2.6 transcribes it: seconds
    # for path 2's window to regain its mean after the TCP flows leave.
    table = {"lia": 17.75, "olia": 58.5, "balia": 14.73}
    campaign = load(CAMPAIGNS / "reproduce-balia-responsiveness.toml")
    plan = build_plan(campaign, **BACKEND)
    assert len(plan.unique_runs()) == 3 * 2 * 5
    published = {
        (e.at["cc"], e.at["queue_packets"], e.metric): e.value for e in campaign.spec.published
    }
    assert published == {(cc, 50, "cwnd_recovery_s.mptcp"): v for cc, v in table.items()}
    for task in plan.tasks:
        mptcp, cross = task.scenario["flows"]
        assert mptcp["cc"] == task.row.variant["cc"]
        assert (cross["count"], cross["start_s"], cross["stop_s"]) == (5, 40.0, 80.0)
        assert task.scenario["trace"] == ["cwnd"]


def test_the_latency_campaign_runs_the_papers_four_cases_over_the_receive_buffer() -> None:
    campaign = load(CAMPAIGNS / "nsdi12-latency.toml")
    plan = build_plan(campaign, **BACKEND)
    assert len(plan.unique_runs()) == 4 * 4
    cases = {}
    for task in plan.tasks:
        (flow,) = task.scenario["flows"]
        assert task.scenario["trace"] == ["blocks"]
        assert flow["app"] == {"kind": "blocks", "block_bytes": 8192}
        assert flow["rcvbuf_bytes"] == int(task.row.variant["rcvbuf_bytes"])
        mechanisms = (flow.get("penalization"), flow.get("opportunistic_retransmit"))
        cases[task.row.variant["case"]] = (flow["protocol"], flow["paths"], mechanisms)
    assert cases["tcp-wifi"][:2] == ("tcp", [["wifi"]])
    assert cases["tcp-3g"][:2] == ("tcp", [["3g"]])
    assert cases["mptcp"] == ("mptcp", [["wifi"], ["3g"]], ("off", False))
    assert cases["mptcp-m1m2"] == ("mptcp", [["wifi"], ["3g"]], ("nsdi12", True))


def test_a_campaign_planning_more_runs_than_memory_holds_is_refused(write_campaign) -> None:
    # 3 points × 2 levels × 200,000 replications: 1.2 million runs, refused before any is built.
    text = SMALL_CAMPAIGN.replace("replications = 2", "replications = 200000")
    with pytest.raises(UserError) as caught:
        build_plan(load(write_campaign(text)), versions={"sim": "v"})
    assert caught.value.field == "replications"
    assert caught.value.line == text.splitlines().index("replications = 200000") + 1
    assert (
        "plans 1,200,000 runs (3 points × 2 variants × 1 backend × 200,000 replications), "
        "more than 1,000,000" in caught.value.detail
    )

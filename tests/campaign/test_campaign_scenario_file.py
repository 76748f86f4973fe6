"""Campaigns over a scenario file (``[scenario] file = ...``) instead of a template: factors set
the file's fields by path, every other field stays as the file has it."""

from __future__ import annotations

import re
import sqlite3
from pathlib import Path

import pytest

from mptcplab.campaign import build_plan, load
from mptcplab.errors import UserError
from mptcplab.scenario import load_scenario
from mptcplab.scenario.model import HEADER_BYTES, MSS_BYTES

REPO = Path(__file__).resolve().parents[2]
NETWORK = REPO / "scenarios" / "shared_bottleneck.toml"
BACKEND = {"backend": "sim", "backend_version": "test"}

CAMPAIGN = f"""
name = "over-a-file"
seed = 4
replications = 1
metrics = ["goodput_mbps", "user_goodput_mbps.tcp"]

[design]
kind = "wsp"
points = 3

[scenario]
file = "{NETWORK}"
duration_s = 4.0
warmup_s = 1.0
"flows[tcp].rcvbuf_max_bytes" = 1048576

[factors.capacity]
low = 2.0
high = 40.0
param = "links[shared].capacity_mbps"

[factors.cc]
levels = ["lia", "olia"]
param = "flows[mptcp].cc"
"""


def _campaign(tmp_path: Path, text: str = CAMPAIGN, name: str = "campaign.toml") -> Path:
    path = tmp_path / name
    path.write_text(text)
    return path


def test_each_run_is_the_file_with_the_factors_values_at_their_paths(tmp_path: Path) -> None:
    plan = build_plan(load(_campaign(tmp_path)), **BACKEND)
    assert len(plan.tasks) == 3 * 2
    base = load_scenario(NETWORK).to_dict()
    for task in plan.tasks:
        expected = {**base, "duration_s": 4.0, "warmup_s": 1.0, "seed": task.row.seed}
        expected["links"] = [{**base["links"][0], "capacity_mbps": task.row.factors["capacity"]}]
        mptcp, tcp = base["flows"]
        expected["flows"] = [
            {**mptcp, "cc": task.row.variant["cc"]},
            {**tcp, "rcvbuf_max_bytes": 1048576},
        ]
        assert task.scenario == expected


def test_a_table_and_a_field_inside_one_can_both_be_set(tmp_path: Path) -> None:
    red = (
        '{ kind = "red", min_packets = 5, max_packets = 15, max_p = 0.1, weight = 0.002, '
        "limit_packets = 60 }"
    )
    text = CAMPAIGN.replace(
        '[factors.cc]\nlevels = ["lia", "olia"]\nparam = "flows[mptcp].cc"',
        f'[factors.queue.levels]\nred = {{ "links[0].queue" = {red} }}\n'
        'short = { "links[shared].queue.ms" = 5 }',
    )
    plan = build_plan(load(_campaign(tmp_path, text)), **BACKEND)
    queues = {task.row.variant["queue"]: task.scenario["links"][0]["queue"] for task in plan.tasks}
    assert queues["red"]["kind"] == "red" and queues["red"]["max_packets"] == 15
    assert queues["short"] == {"kind": "droptail", "ms": 5}


def test_a_field_named_by_id_and_by_position_is_one_field(tmp_path: Path) -> None:
    text = CAMPAIGN.replace(
        "[factors.cc]",
        '[factors.twice]\nlow = 1.0\nhigh = 2.0\nparam = "links[0].capacity_mbps"\n\n[factors.cc]',
    )
    with pytest.raises(
        UserError, match=re.escape("links[0].capacity_mbps is already set by factor 'capacity'")
    ):
        load(_campaign(tmp_path, text))


def test_a_relative_file_starts_at_the_campaign_files_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "nets").mkdir()
    (tmp_path / "nets" / "net.toml").write_text(NETWORK.read_text())
    (tmp_path / "campaigns").mkdir()
    path = _campaign(
        tmp_path / "campaigns", CAMPAIGN.replace(f'file = "{NETWORK}"', 'file = "../nets/net.toml"')
    )
    monkeypatch.chdir(REPO)  # anywhere but the campaign's folder
    campaign = load(path)
    assert campaign.scenario_file == tmp_path / "campaigns" / ".." / "nets" / "net.toml"
    assert len(build_plan(campaign, **BACKEND).tasks) == 6


@pytest.mark.parametrize(
    ("old", "new", "line", "expected"),
    [
        (
            "links[shared].capacity_mbps",
            "links[sharde].capacity_mbps",
            "param",
            "links[sharde].capacity_mbps: shared_bottleneck.toml has no element of links with "
            "id 'sharde'; ids: shared",
        ),
        (
            "links[shared].capacity_mbps",
            "links[2].capacity_mbps",
            "param",
            "links[2].capacity_mbps: shared_bottleneck.toml gives links 1 element "
            "(positions from 0)",
        ),
        (
            "links[shared].capacity_mbps",
            "links[shared].capacty_mbps",
            "param",
            "unknown field 'capacty_mbps' (did you mean 'capacity_mbps'?)",
        ),
        (
            "links[shared].capacity_mbps",
            "flows[0].tcp.rto_min_ms",
            "param",
            "flows[0].tcp.rto_min_ms: shared_bottleneck.toml writes no 'tcp' in flows[0]; set "
            'the whole of it instead ("flows[0].tcp" = ...)',
        ),
        ("links[shared].capacity_mbps", "links..loss", "param", "expected a field path"),
        ("links[shared].capacity_mbps", "seed", "param", "each run's seed derives from"),
        (f'file = "{NETWORK}"', 'file = "elsewhere.toml"', "file", "found nothing"),
        (
            f'file = "{NETWORK}"',
            f'file = "{NETWORK}"\ntemplate = "two_path"',
            "file",
            "give either `template` or `file`",
        ),
        (f'file = "{NETWORK}"', "", "[scenario]", "missing key 'template' (a scenario template)"),
        (
            '"flows[tcp].rcvbuf_max_bytes"',
            '"flows[tcp].rcvbuf_max_byte"',
            '"flows[tcp].rcvbuf_max_byte"',
            "unknown field 'rcvbuf_max_byte'",
        ),
    ],
)
def test_a_bad_path_or_file_is_named_at_its_line(
    tmp_path: Path, old: str, new: str, line: str, expected: str
) -> None:
    text = CAMPAIGN.replace(old, new)
    with pytest.raises(UserError) as err:
        load(_campaign(tmp_path, text))
    assert expected in str(err.value)
    wanted = next(i for i, row in enumerate(text.splitlines(), 1) if row.startswith(line))
    assert err.value.line == wanted, str(err.value)


def test_a_value_the_field_refuses_is_blamed_on_its_factor(tmp_path: Path) -> None:
    text = CAMPAIGN.replace('param = "flows[mptcp].cc"', 'param = "flows[mptcp].scheduler"')
    with pytest.raises(UserError) as err:
        build_plan(load(_campaign(tmp_path, text)), **BACKEND)
    # The level that set the value, not the factor's header: the other level may be fine.
    line = next(i for i, row in enumerate(text.splitlines(), 1) if row.startswith("levels = "))
    assert err.value.line == line and err.value.field == "factors.cc.levels[0]"
    assert "with flows[0].scheduler = 'lia'" in str(err.value)
    assert "minrtt" in str(err.value)  # what the field takes


def test_a_problem_in_the_file_itself_is_named_in_that_file(tmp_path: Path) -> None:
    broken = tmp_path / "net.toml"
    broken.write_text(NETWORK.read_text().replace("capacity_mbps = 10.0", "capacity_mbps = -1.0"))
    text = CAMPAIGN.replace(f'file = "{NETWORK}"', 'file = "net.toml"')
    with pytest.raises(UserError) as err:
        load(_campaign(tmp_path, text))
    assert err.value.file == str(broken) and err.value.field == "links[0].capacity_mbps"


def test_a_campaign_over_a_file_runs_on_the_simulator(cli, tmp_path: Path) -> None:
    store = tmp_path / "store.sqlite"
    code, _, err = cli("run", str(_campaign(tmp_path)), "-o", str(store), "-q")
    assert code == 0, err
    with sqlite3.connect(store) as db:
        rows = db.execute("SELECT status FROM runs").fetchall()
    assert [r[0] for r in rows] == ["done"] * 6
    code, _, err = cli("export", str(store), "--csv", str(tmp_path / "runs.csv"))
    assert code == 0, err
    import pandas as pd

    runs = pd.read_csv(tmp_path / "runs.csv")
    # Oracle: no run carries more than its one link's payload rate.
    payload = MSS_BYTES / (MSS_BYTES + HEADER_BYTES)
    assert (runs["goodput_mbps"] <= runs["capacity"] * payload * 1.001).all()
    assert (runs["goodput_mbps"] > 0).all()


def test_the_store_and_report_keep_the_scenario_file_as_it_ran(cli, tmp_path: Path) -> None:
    from mptcplab.analysis.report import build_report
    from mptcplab.campaign.overrides import stored
    from mptcplab.campaign.store import Store

    network = tmp_path / "net.toml"
    network.write_text(NETWORK.read_text())
    path = _campaign(tmp_path, CAMPAIGN.replace(f'file = "{NETWORK}"', 'file = "net.toml"'))
    store = tmp_path / "store.sqlite"
    code, _, err = cli("run", str(path), "-o", str(store), "-q", "--set", "replications=2")
    assert code == 0, err
    network.write_text("# changed after the run\n")
    with Store(store) as opened:
        saved = opened.campaign_text()
    assert saved is not None
    text = saved[1]
    assert text.startswith(CAMPAIGN.replace(f'file = "{NETWORK}"', 'file = "net.toml"').rstrip())
    assert [(o.dotted, o.value) for o in stored(text)] == [("replications", 2)]
    block = text[text.index(f"# ---- scenario file {network} as the runs used it ----") :]
    assert block.splitlines()[1:] == [
        f"# {line}".rstrip() for line in NETWORK.read_text().splitlines()
    ]
    assert "capacity_mbps = 10.0" in build_report(store)

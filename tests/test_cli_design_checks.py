"""``mptcplab design``: a campaign is checked as ``status`` checks it, and every option either
acts or is refused."""

from __future__ import annotations

from pathlib import Path

import pytest

from mptcplab import sim

if not sim.available():  # pragma: no cover - the build always provides it
    pytest.skip("the simulator extension is not built (make build)", allow_module_level=True)

CAMPAIGN = """\
name = "design-checks"
seed = 11
replications = 1
metrics = ["goodput_mbps"]

[design]
kind = "lhs"
points = 3
designs = 2

[scenario]
template = "two_path"
duration_s = 1.0

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


@pytest.fixture
def campaign(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    # status names the store's place relative to the working directory.
    monkeypatch.chdir(tmp_path)
    path = tmp_path / "campaign.toml"
    path.write_text(CAMPAIGN)
    return path


@pytest.mark.parametrize(
    "change",
    ["scenario.duration_s=-5", 'factors.cc.levels=["lia","cubic_typo"]'],
)
def test_a_changed_campaign_the_template_rejects_is_refused_as_status_refuses_it(
    cli, campaign: Path, change: str
) -> None:
    code, out, err = cli("design", str(campaign), "--set", change)
    assert code == 2 and out == ""
    assert "rejected" in err
    status_code, _, status_err = cli("status", str(campaign), "--set", change)
    assert status_code == 2 and err == status_err


def test_a_campaign_is_planned_without_asking_its_backends(
    cli, campaign: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from mptcplab.campaign import runner
    from mptcplab.errors import UserError

    def unavailable(*_: object) -> None:
        raise UserError("backend 'sim' is not available here")

    # A design is points, not runs: a machine without the campaign's backend still shows it.
    monkeypatch.setattr(runner, "backends_of", unavailable)
    monkeypatch.setattr(runner, "backend_of", unavailable)
    code, out, err = cli("design", str(campaign), "--design", "1", "--show", "0")
    assert code == 0, err
    assert "design 1 — lhs, 3 points × 2 factors" in out


def test_seed_is_refused_with_a_campaign_and_set_seed_changes_its_design(
    cli, campaign: Path
) -> None:
    code, out, err = cli("design", str(campaign), "--seed", "5")
    assert code == 2 and out == ""
    assert err.strip() == (
        "error: --seed: --seed cannot be combined with a campaign file (it sets it); "
        "to change the campaign's: --set seed=N"
    )
    # 0 is a seed too, not the absence of one.
    code, _, err = cli("design", str(campaign), "--seed", "0")
    assert code == 2 and "--seed cannot be combined" in err
    _, first, _ = cli("design", str(campaign), "--show", "3")
    code, reseeded, err = cli("design", str(campaign), "--set", "seed=5", "--show", "3")
    assert code == 0, err
    assert reseeded != first


def test_design_is_refused_without_a_campaign(cli) -> None:
    code, out, err = cli("design", "--kind", "wsp", "-d", "2", "-n", "4", "--design", "3")
    assert code == 2 and out == ""
    assert err.strip() == (
        "error: --design: --design chooses one of a campaign's designs; it needs a campaign file"
    )
    # The unit-cube seed still defaults to 1.
    _, default, _ = cli("design", "--kind", "lhs", "-d", "2", "-n", "4")
    _, seeded, _ = cli("design", "--kind", "lhs", "-d", "2", "-n", "4", "--seed", "1")
    assert default == seeded


def test_a_one_point_design_shows_its_size_under_the_usual_names(cli) -> None:
    code, out, err = cli("design", "--kind", "wsp", "-d", "2", "-n", "1", "--show", "0")
    assert code == 0, err
    rows = [line.strip("│ ").split("│") for line in out.splitlines() if line.startswith("│")]
    assert [[cell.strip() for cell in row] for row in rows] == [
        ["points", "1"],
        ["dimensions", "2"],
    ]


@pytest.mark.parametrize(
    ("option", "message"),
    [
        # Each of these names an argument `generate` has already: it once ended in a traceback.
        ("rng=3", "error: --option: the design's seed is --seed, not an option"),
        ("progress=1", "error: --option: design 'wsp': unknown option(s) ['progress']"),
        ("levels=2", "error: --option: design 'wsp': unknown option(s) ['levels']"),
    ],
)
def test_an_option_the_engine_does_not_take_is_refused_by_name(
    cli, option: str, message: str
) -> None:
    code, out, err = cli("design", "--kind", "wsp", "-d", "2", "-n", "4", "--option", option)
    assert code == 2 and out == ""
    assert err.startswith(message) and "Traceback" not in err


def test_an_unknown_kind_is_refused_by_name(cli) -> None:
    code, _, err = cli("design", "--kind", "grid", "-d", "2", "-n", "4")
    assert code == 2
    assert err.strip() == (
        "error: --kind: design: unknown kind 'grid'; expected one of "
        "['factorial', 'lhs', 'random', 'sobol', 'wsp']"
    )


def test_no_quality_leaves_the_measures_out(cli) -> None:
    code, out, err = cli("design", "--kind", "sobol", "-d", "3", "-n", "8", "--no-quality")
    assert code == 0, err
    assert "design quality" not in out and "x2" in out
    code, out, _ = cli("design", "--kind", "sobol", "-d", "3", "-n", "8")
    assert code == 0 and "design quality" in out

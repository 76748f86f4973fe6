"""A command given a campaign file reads the store, whose plan is the one its last run made: when
that run's campaign is not the file as it reads now (the file edited since, or run with --set),
the command says so, and it says nothing when they agree."""

from __future__ import annotations

from pathlib import Path

from campaign_cases import SMALL_CAMPAIGN

SMALL = SMALL_CAMPAIGN.replace("replications = 2", "replications = 1").replace(
    "duration_s = 1.0", "duration_s = 0.5"
)


def _export(cli, path: Path, tmp_path: Path) -> str:
    code, _, err = cli("export", str(path), "--csv", str(tmp_path / "runs.csv"))
    assert code == 0, err
    return err


def test_a_store_planned_by_another_version_of_the_file_is_named(
    ran_campaign, cli, tmp_path: Path
) -> None:
    path, _ = ran_campaign(SMALL, "small")
    assert "warning" not in _export(cli, path, tmp_path)
    assert "warning" not in cli("report", str(path), "-o", str(tmp_path / "r.html"))[2]

    changed = tmp_path / "changed.toml"
    changed.write_text(SMALL.replace("high = 20.0", "high = 30.0", 1))
    code, _, err = cli("run", str(changed), "-q")
    assert code == 0, err
    err = _export(cli, path, tmp_path)
    assert "warning" in err and "different version of the campaign file" in err
    assert f"mptcplab run {path}" in err
    code, _, err = cli("compare", str(path))
    assert code == 0 and "different version of the campaign file" in err

    # Run from the file again (every run is stored): its plan is the store's once more, the
    # report shows its text, and nothing is said.
    code, _, err = cli("run", str(path), "-q")
    assert code == 0, err
    assert "warning" not in _export(cli, path, tmp_path)
    code, _, err = cli("report", str(path), "-o", str(tmp_path / "r.html"))
    assert code == 0 and "warning" not in err
    html = (tmp_path / "r.html").read_text()
    assert "high = 20.0" in html and "high = 30.0" not in html


def test_a_store_run_with_set_names_the_options(ran_campaign, cli, tmp_path: Path) -> None:
    path, _ = ran_campaign(SMALL, "small")
    code, _, err = cli("run", str(path), "-q", "--set", "design.points=2")
    assert code == 0, err
    err = _export(cli, path, tmp_path)
    assert "with --set design.points=2;" in err
    assert "different version" not in err


def test_status_of_a_store_run_with_set_says_whose_plan_it_counts(
    ran_campaign, cli, tmp_path: Path
) -> None:
    # status counts the runs of the file's plan: for a store filled only under --set it said
    # "0 done", and nothing more.
    path, store = ran_campaign(SMALL, "small")
    store.unlink()
    code, _, err = cli("run", str(path), "-q", "--set", "design.points=2")
    assert code == 0, err
    code, _, err = cli("status", str(path))
    assert code == 0, err
    assert "with --set design.points=2;" in err
    assert f"the store's own: mptcplab status {store.relative_to(tmp_path)}" in err
    code, _, err = cli("status", str(path), "--set", "design.points=2")
    assert code == 0 and "warning" not in err


def test_a_set_given_to_a_store_run_without_any_names_no_other_version(
    ran_campaign, cli, tmp_path: Path
) -> None:
    """The store was run from the file as it is; only this command's --set differs. Calling
    that a different version of the file sent its user looking for an edit never made."""
    path, _ = ran_campaign(SMALL, "small")
    code, _, err = cli("status", str(path), "--set", "design.points=2")
    assert code == 0, err
    assert "last planned without --set options;" in err
    assert "different version" not in err

"""`mptcplab run` of a campaign file edited since the store's last run replaces the store's
plan; it says so before running, as status and report do, and says how many stored runs the
new plan leaves out (they stay in the store, where status, report and export no longer show
them)."""

from __future__ import annotations

import re
from pathlib import Path

from campaign_cases import SMALL_CAMPAIGN

SMALL = SMALL_CAMPAIGN.replace("replications = 2", "replications = 1").replace(
    "duration_s = 1.0", "duration_s = 0.5"
)


def _run(cli, path: Path, *options: str) -> str:
    code, out, err = cli("run", str(path), "-q", *options)
    assert code == 0, err
    return " ".join((out + err).split())


def _planned(said: str) -> int:
    found = re.search(r"(\d+) runs planned", said)
    assert found, said
    return int(found.group(1))


def test_a_run_of_an_edited_file_says_how_many_stored_runs_its_plan_leaves_out(
    write_campaign, cli, tmp_path: Path
) -> None:
    store = tmp_path / "store.sqlite"
    first = write_campaign(SMALL.replace("[design]", f'output = "{store}"\n\n[design]'))
    original = first.read_text()
    said = _run(cli, first)
    assert "warning" not in said
    runs = _planned(said)

    first.write_text(original.replace("duration_s = 0.5", "duration_s = 0.6"))
    said = _run(cli, first)
    warning = (
        f"warning: {first}: the store's runs were last planned from a different version of the "
        f"campaign file (or of its scenario file); this run replaces that plan with its own, "
        f"which leaves out {runs} of the {runs} runs stored (they stay in the store, but "
        "status, report and export follow the new plan)"
    )
    assert warning in said
    # Before the runs, not after: the summary comes last.
    assert said.index(warning) < said.index("runs planned")
    assert f"0 already stored, {runs} completed now" in said

    # Run again as it is: its plan is the store's, and nothing is said.
    assert "warning" not in _run(cli, first)

    # Back to the first version: its runs are all stored, the edited version's are left out.
    first.write_text(original)
    said = _run(cli, first)
    assert f"which leaves out {runs} of the {2 * runs} runs stored" in said
    assert f"{runs} already stored, 0 completed now" in said


def test_a_run_that_only_adds_set_options_names_them_as_the_difference(
    write_campaign, cli, tmp_path: Path
) -> None:
    store = tmp_path / "store.sqlite"
    path = write_campaign(SMALL.replace("[design]", f'output = "{store}"\n\n[design]'))
    _run(cli, path, "--set", "design.points=2")
    said = _run(cli, path)
    assert "the store's runs were last planned with --set design.points=2;" in said
    assert "this run replaces that plan with its own, which" in said

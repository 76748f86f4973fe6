"""When the executor fails, the store says what happened: one that cannot start (a cluster
refusing the driver) leaves the store's plan as the last run left it, and one whose clean-up
fails still leaves the invocation's provenance row closed (the store must not claim that a
finished campaign is still running)."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from pathlib import Path

import pytest
from campaign_cases import SMALL_CAMPAIGN

from mptcplab.campaign import load, run_campaign
from mptcplab.campaign import runner as runner_module
from mptcplab.campaign.executors import Task
from mptcplab.campaign.store import RunOutcome, Store
from mptcplab.errors import UserError


class _CloseFails:
    """Fails every run at once (nothing to simulate), then fails to stop."""

    name = "test"
    workers = 1

    def run(self, tasks: Iterable[Task]) -> Iterator[RunOutcome]:
        for task in tasks:
            yield RunOutcome(task.run_key, False, None, None, "not run", 0.0)

    def close(self) -> None:
        raise RuntimeError("the workers would not stop")


def test_the_provenance_row_is_closed_when_the_executor_fails_to_close(
    write_campaign, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(runner_module, "make_executor", lambda *a, **k: _CloseFails())
    store = tmp_path / "store.sqlite"
    with pytest.raises(RuntimeError, match="would not stop"):
        run_campaign(load(write_campaign(SMALL_CAMPAIGN)), output=store, progress=False)
    with Store(store) as opened:
        (row,) = opened.provenance()
        assert row["failed_runs"] == 12
        assert row["ended_at"] is not None


def test_an_executor_that_cannot_start_leaves_the_stored_plan_as_it_was(
    write_campaign, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    store = tmp_path / "store.sqlite"
    text = SMALL_CAMPAIGN.replace("replications = 2", "replications = 1")
    run_campaign(load(write_campaign(text)), jobs=1, output=store, progress=False)
    with Store(store) as opened:
        plan = opened.task_rows()

    def refused(*args: object, **kwargs: object) -> None:
        raise UserError("cannot connect to the Ray cluster at 10.0.0.1:6379", field="--address")

    monkeypatch.setattr(runner_module, "make_executor", refused)
    edited = load(write_campaign(text.replace("points = 3", "points = 4"), "edited.toml"))
    with pytest.raises(UserError, match="cannot connect"):
        run_campaign(edited, output=store, progress=False)
    with Store(store) as opened:
        assert opened.task_rows() == plan
        assert opened.campaign_text() == (str(tmp_path / "campaign.toml"), text)

"""The local pool's workers: a backend that exits or is interrupted fails its own run only, an
interruption while suspects run alone stops cleanly, and the workers of a runner killed outright
stop instead of running on with nobody to store their results."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from campaign_cases import SMALL_CAMPAIGN

from mptcplab.campaign import CampaignInterrupted, Store, load, run_campaign
from mptcplab.campaign.backends import BACKENDS, Backend
from mptcplab.campaign.executors import local


def _backend(monkeypatch: pytest.MonkeyPatch, name: str, function: str) -> None:
    monkeypatch.setitem(
        BACKENDS,
        name,
        Backend(name, f"campaign_flaky_backend:{function}", "campaign_flaky_backend:version"),
    )


@pytest.mark.parametrize(
    ("how", "stored"), [("exit", "SystemExit: 3"), ("interrupt", "KeyboardInterrupt")]
)
def test_a_backend_that_exits_or_is_interrupted_fails_its_own_run(
    write_campaign, monkeypatch: pytest.MonkeyPatch, how: str, stored: str
) -> None:
    _backend(monkeypatch, "leaving", "leaves")
    monkeypatch.setenv("MPTCPLAB_TEST_LEAVE", how)
    path = write_campaign(SMALL_CAMPAIGN.replace("metrics =", 'backend = "leaving"\nmetrics ='))
    summary = run_campaign(load(path), output=path.parent / "s.sqlite", progress=False, jobs=2)
    assert (summary.completed, summary.failed) == (6, 6)
    with Store(summary.store) as store:
        errors = [r["error"] for r in store.task_rows() if r["error"]]
    assert len(errors) == 6 and all(e == f"the backend raised {stored}" for e in errors), errors


def test_an_interruption_while_a_suspect_runs_alone_stops_the_campaign(
    write_campaign, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A crash makes every run queued with it a suspect, run again alone; Ctrl-C then used to
    end in an AttributeError (the alone pool, already shut down, had no processes to stop) and
    left the worker running and the provenance open."""
    _backend(monkeypatch, "crashy", "crash")
    monkeypatch.setenv("MPTCPLAB_TEST_CRASH", "1")
    real_alone = local.LocalExecutor._alone

    def interrupted(future: object, task: object) -> None:
        raise KeyboardInterrupt  # Ctrl-C while the run alone is waited for

    def alone_then_interrupt(self: local.LocalExecutor, task: local.Task):  # type: ignore[no-untyped-def]
        monkeypatch.setattr(local, "_outcome", interrupted)
        return real_alone(self, task)

    monkeypatch.setattr(local.LocalExecutor, "_alone", alone_then_interrupt)
    path = write_campaign(SMALL_CAMPAIGN.replace("metrics =", 'backend = "crashy"\nmetrics ='))
    with pytest.raises(CampaignInterrupted):
        run_campaign(load(path), output=path.parent / "s.sqlite", progress=False, jobs=2)
    with Store(path.parent / "s.sqlite") as store:
        (entry,) = store.provenance()
    assert entry["ended_at"] is not None


RUNNER = """\
import sys

from mptcplab.campaign import load, run_campaign
from mptcplab.campaign.backends import BACKENDS, Backend

BACKENDS["slow"] = Backend("slow", "campaign_flaky_backend:slow", "campaign_flaky_backend:version")
if __name__ == "__main__":
    run_campaign(load(sys.argv[1]), output=sys.argv[2], progress=False, jobs=2)
"""


def test_the_workers_of_a_runner_killed_outright_stop(write_campaign, tmp_path: Path) -> None:
    path = write_campaign(SMALL_CAMPAIGN.replace("metrics =", 'backend = "slow"\nmetrics ='))
    script = tmp_path / "runner.py"
    script.write_text(RUNNER)
    pids = tmp_path / "pids"
    pids.mkdir()
    env = dict(
        os.environ,
        PYTHONPATH=os.pathsep.join([str(Path(__file__).parent), *sys.path]),
        MPTCPLAB_TEST_PIDS=str(pids),
        MPTCPLAB_TEST_SLOW_S="5",
    )
    runner = subprocess.Popen(
        [sys.executable, str(script), str(path), str(tmp_path / "s.sqlite")],
        env=env,
        start_new_session=True,  # its own group: the workers can be found, and only they
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    try:
        deadline = time.monotonic() + 60
        while len(list(pids.iterdir())) < 2:  # both workers are in a run
            assert runner.poll() is None, runner.stderr.read() if runner.stderr else ""
            assert time.monotonic() < deadline, "no run started within a minute"
            time.sleep(0.05)
        os.kill(runner.pid, signal.SIGKILL)  # the runner alone, not its group
        runner.wait()
        # Each worker would finish its 5 s run and start the next queued one; stopped, the
        # group empties well before (the resource tracker leaves once the runner is gone).
        deadline = time.monotonic() + 4
        while time.monotonic() < deadline:
            try:
                os.killpg(runner.pid, 0)
            except ProcessLookupError:
                break
            time.sleep(0.05)
        else:
            raise AssertionError("the workers outlived their runner")
        assert len(list(pids.iterdir())) == 2, "a worker started a run after the kill"
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(runner.pid, signal.SIGKILL)

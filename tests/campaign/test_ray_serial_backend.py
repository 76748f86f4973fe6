"""Under Ray, as under the local pool, a serial backend (the emulator: its runs share the CPU
that forwards their packets) never has two runs at once on a machine; and a cluster address
nobody listens at is refused before the store is made or its plan replaced. Skipped where Ray,
an optional extra, is not installed."""

from __future__ import annotations

import itertools
import json
import os
import socket
import time
from pathlib import Path
from typing import Any

import pytest
from campaign_cases import SMALL_CAMPAIGN

from mptcplab.campaign import load, run_campaign
from mptcplab.campaign.backends import BACKENDS, Backend, run_sim, sim_version
from mptcplab.errors import UserError

ray = pytest.importorskip(
    "ray", reason="Ray is an optional extra (pip install 'mptcplab[ray]'), not installed here"
)

#: Where each run of the backend below appends its start and end (Ray workers inherit it).
LOG = "MPTCPLAB_TEST_SERIAL_LOG"

# Four runs of 0.5 s of simulated time.
TINY = (
    SMALL_CAMPAIGN.replace("replications = 2", "replications = 1")
    .replace("duration_s = 1.0", "duration_s = 0.5")
    .replace("points = 3", "points = 2")
)


def run(scenario: dict[str, Any]) -> dict[str, Any]:
    """The simulator, held long enough that two runs at once would overlap."""
    started = time.time()
    time.sleep(0.5)
    report = run_sim(scenario)
    with open(os.environ[LOG], "a") as log:
        log.write(json.dumps([started, time.time()]) + "\n")
    return report


def version() -> str:
    return sim_version()


def test_a_serial_backend_runs_one_run_at_a_time_on_a_ray_node(
    write_campaign, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    log = tmp_path / "runs.jsonl"
    monkeypatch.setenv(LOG, str(log))
    # Ray's workers import the backend by reference, from this folder.
    here = str(Path(__file__).parent)
    monkeypatch.setenv(
        "PYTHONPATH", os.pathsep.join(filter(None, [here, os.environ.get("PYTHONPATH")]))
    )
    monkeypatch.setitem(
        BACKENDS, "serial", Backend("serial", f"{__name__}:run", f"{__name__}:version", serial=True)
    )
    campaign = load(write_campaign(TINY.replace("metrics =", 'backend = "serial"\nmetrics =')))
    summary = run_campaign(campaign, executor="ray", output=tmp_path / "s.sqlite", progress=False)
    assert (summary.planned, summary.completed, summary.failed) == (4, 4, 0)
    spans = [json.loads(line) for line in log.read_text().splitlines()]
    assert len(spans) == 4
    overlapping = [
        (a, b) for a, b in itertools.combinations(spans, 2) if a[0] < b[1] and b[0] < a[1]
    ]
    assert not overlapping


def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def test_an_unreachable_cluster_leaves_the_store_untouched(write_campaign, tmp_path: Path) -> None:
    address = f"127.0.0.1:{_closed_port()}"  # bound a moment ago, now closed: refused
    store = tmp_path / "s.sqlite"
    campaign = load(write_campaign(TINY))
    with pytest.raises(UserError, match="cannot connect to the Ray cluster") as caught:
        run_campaign(campaign, executor="ray", address=address, output=store, progress=False)
    assert caught.value.field == "--address"
    assert not store.exists()

    # A store planned by another version of the campaign keeps that plan.
    run_campaign(campaign, jobs=1, output=store, progress=False)
    before = store.read_bytes()
    edited = load(write_campaign(TINY.replace("points = 2", "points = 3"), "edited.toml"))
    with pytest.raises(UserError, match="cannot connect to the Ray cluster"):
        run_campaign(edited, executor="ray", address=address, output=store, progress=False)
    assert store.read_bytes() == before

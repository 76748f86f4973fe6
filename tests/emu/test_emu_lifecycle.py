"""Runs leave nothing behind, a killed run is cleaned by ``mptcplab clean``, and two runs at
once do not collide. Real namespaces and processes (skipped where the emulator cannot run)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest
from emu_helpers import link, tcp_flow

from mptcplab import emu
from mptcplab.backends.emu import netns, rundir
from mptcplab.backends.emu.addressing import run_id_of_namespace

# The `run_cli` fixture of tests/conftest.py.
CliRunner = Callable[..., subprocess.CompletedProcess[str]]

pytestmark = [pytest.mark.root, pytest.mark.usefixtures("emulator")]

PAYLOAD = 1448 / 1500


def small(duration_s: float = 3.0) -> dict:
    return {
        "duration_s": duration_s,
        "warmup_s": 1.0,
        "links": [link("wifi", 8.0, 10.0)],
        "flows": [tcp_flow("laptop", ["wifi"])],
    }


def leftovers(run_id: str) -> dict[str, list]:
    return {
        "namespaces": [n for n in netns.list_namespaces() if run_id_of_namespace(n) == run_id],
        "processes": [p for p, r in rundir.our_processes().items() if r == run_id],
        "run_dir": [p for p in [rundir.RUN_ROOT / run_id] if p.exists()],
    }


NOTHING = {"namespaces": [], "processes": [], "run_dir": []}
SCRIPT = "import json, sys; from mptcplab import emu; emu.run(json.loads(sys.argv[1]))"


def _parent_of(pid: int) -> int | None:
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("PPid:"):
                return int(line.split()[1])
    except OSError:
        return None
    return None


def started_run(before: set[str], parent: int, timeout_s: float = 30.0) -> str:
    """The id of the run that ``parent`` started since ``before``, once its linkem, server and
    client are up (runs of other test sessions on the machine are ignored)."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        for r in set(rundir.run_ids()) - before:
            pids = rundir.recorded_pids(r)
            if (
                len(pids) >= 3
                and rundir.is_alive(r)
                and any(_parent_of(pid) == parent for pid, _ in pids)
            ):
                return r
        time.sleep(0.05)
    raise AssertionError("the run did not start")


def test_a_finished_run_leaves_nothing_behind() -> None:
    report = emu.run(small())
    assert leftovers(report["backend"]["run_id"]) == NOTHING


def test_a_killed_run_is_cleaned_by_mptcplab_clean(tmp_path: Path, run_cli: CliRunner) -> None:
    before = set(rundir.run_ids())
    proc = subprocess.Popen([sys.executable, "-c", SCRIPT, json.dumps(small(60.0))])
    try:
        run_id = started_run(before, proc.pid)
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait(timeout=10)
        # The namespaces survive the orchestrator; the lock does not.
        assert leftovers(run_id)["namespaces"]
        assert not rundir.is_alive(run_id)
        out = run_cli("clean")
        assert out.returncode == 0, out.stderr
        assert f"mptcplab-{run_id}-c0" in out.stdout
        assert leftovers(run_id) == NOTHING
    finally:
        if proc.poll() is None:
            proc.kill()


@pytest.mark.parametrize(
    "signals",
    [
        [signal.SIGTERM],
        # The terminal or SSH session closing.
        [signal.SIGHUP],
        # Ctrl-C twice; `timeout` signals the process and then its group: the second lands
        # while the first one's teardown runs, and must not cut it short.
        [signal.SIGINT, signal.SIGINT],
        [signal.SIGTERM, signal.SIGTERM],
    ],
    ids=["sigterm", "sighup", "ctrl-c-twice", "sigterm-twice"],
)
def test_a_stop_signal_tears_the_run_down(tmp_path: Path, signals: list[int]) -> None:
    path = tmp_path / "long.json"
    path.write_text(json.dumps(small(60.0)))
    before = set(rundir.run_ids())
    proc = subprocess.Popen(
        [sys.executable, "-m", "mptcplab.cli", "emu", str(path)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        run_id = started_run(before, proc.pid)
        for k, sent in enumerate(signals):
            if k:
                time.sleep(0.02)
            proc.send_signal(sent)
        _, err = proc.communicate(timeout=30)
        assert proc.returncode == 130, err
        assert "interrupted" in err
        assert leftovers(run_id) == NOTHING
    finally:
        if proc.poll() is None:
            proc.kill()


def test_clean_leaves_a_live_run_alone() -> None:
    before = set(rundir.run_ids())
    proc = subprocess.Popen([sys.executable, "-c", SCRIPT, json.dumps(small(6.0))])
    try:
        run_id = started_run(before, proc.pid)
        emu.clean()
        assert leftovers(run_id)["namespaces"], "clean removed a live run"
        assert proc.wait(timeout=60) == 0
        assert leftovers(run_id) == NOTHING
    finally:
        if proc.poll() is None:
            proc.kill()


def test_two_runs_at_once_do_not_collide(tmp_path: Path) -> None:
    path = tmp_path / "small.json"
    path.write_text(json.dumps(small(5.0)))
    procs = [
        subprocess.Popen(
            [sys.executable, "-m", "mptcplab.cli", "emu", str(path), "--json"],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for _ in range(2)
    ]
    outs = [p.communicate(timeout=120) for p in procs]
    assert [p.returncode for p in procs] == [0, 0], [err for _, err in outs]
    reports = [json.loads(out) for out, _ in outs]
    assert reports[0]["backend"]["run_id"] != reports[1]["backend"]["run_id"]
    for r in reports:
        assert r["flows"][0]["goodput_mbps"] >= 0.8 * 8.0 * PAYLOAD
        assert leftovers(r["backend"]["run_id"]) == NOTHING


def test_a_namespace_made_but_not_yet_recorded_is_taken_down() -> None:
    """An interrupt between `ip netns add` and the run recording the namespace left it
    behind: the teardown takes down every namespace of the run's plan that exists."""
    from mptcplab.backends.emu.runner import Run
    from mptcplab.scenario.model import Scenario

    run = Run(Scenario.model_validate(small()))
    made = run.plan.namespaces[0]
    netns.add(made)  # and interrupted before `self.namespaces.append`
    try:
        assert made in netns.list_namespaces() and run.namespaces == []
        run.teardown()
        assert leftovers(run.rundir.run_id) == NOTHING
    finally:
        netns.delete_all([made])


def test_an_interrupt_while_servers_start_stops_those_already_started(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Ctrl-C while the second flow's server starts: the first flow's server, already
    running, is stopped by the teardown and not left waiting for its `go`."""
    from mptcplab.backends.emu import traffic
    from mptcplab.backends.emu.runner import Run
    from mptcplab.scenario.model import Scenario

    real_start = traffic._start
    calls: list[str] = []

    def interrupted_on_second(*args: object) -> object:
        calls.append("start")
        if len(calls) == 2:
            raise KeyboardInterrupt
        return real_start(*args)  # type: ignore[arg-type]

    monkeypatch.setattr(traffic, "_start", interrupted_on_second)
    scenario = small()
    scenario["flows"] = [tcp_flow("laptop", ["wifi"]), tcp_flow("phone", ["wifi"])]
    run = Run(Scenario.model_validate(scenario))
    try:
        run.build()
        with pytest.raises(KeyboardInterrupt):
            run.traffic()
        assert len(calls) == 2
    finally:
        run.teardown()
    assert leftovers(run.rundir.run_id) == NOTHING

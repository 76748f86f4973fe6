"""`mptcplab clean` touches a run only while it holds the run's lock, and only folders that are
runs. It used to list the live runs once and tear down everything else: a run that started while
it was busy (each kill may wait 2 s) lost its folder and namespaces under its feet, and any other
folder in the run root (`notes/`) was removed. No root needed: the run root is a scratch folder
and the kernel (processes, namespaces, congestion controls) is stubbed."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from mptcplab.backends.emu import cleanup, kernel, netns, rundir


class FakeKernel:
    """The namespaces and processes `clean` sees; what it deletes and kills is recorded."""

    def __init__(self) -> None:
        self.namespaces: set[str] = set()
        self.processes: dict[int, str] = {}
        self.deleted: list[str] = []
        self.killed: list[int] = []

    def delete(self, ns: str) -> bool:
        self.namespaces.discard(ns)
        self.deleted.append(ns)
        return True

    def kill(self, pid: int) -> bool:
        self.processes.pop(pid, None)
        self.killed.append(pid)
        return True


@pytest.fixture
def fake(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> FakeKernel:
    k = FakeKernel()
    monkeypatch.setattr(rundir, "RUN_ROOT", tmp_path / "runs")
    monkeypatch.setattr(os, "geteuid", lambda: 0)
    monkeypatch.setattr(netns, "list_namespaces", lambda: sorted(k.namespaces))
    monkeypatch.setattr(netns, "delete", k.delete)
    monkeypatch.setattr(rundir, "our_processes", lambda: dict(k.processes))
    monkeypatch.setattr(
        rundir, "process_of_run", lambda pid, run_id: k.processes.get(pid) == run_id
    )
    monkeypatch.setattr(cleanup, "_kill", k.kill)
    monkeypatch.setattr(kernel, "kernel_cc_module", lambda: None)
    return k


def dead_run(k: FakeKernel, pid: int) -> rundir.RunDir:
    """A run whose orchestrator was killed: folder, lock file (not held), a process, a
    namespace."""
    run = rundir.RunDir.create()
    run.record_pid(pid, "linkem")
    k.processes[pid] = run.run_id
    k.namespaces.add(f"mptcplab-{run.run_id}-c0")
    assert run._lock_fd is not None
    os.close(run._lock_fd)  # what the orchestrator's death does
    run._lock_fd = None
    return run


def test_a_run_that_starts_while_clean_is_busy_is_not_touched(
    fake: FakeKernel, monkeypatch: pytest.MonkeyPatch
) -> None:
    dead = dead_run(fake, 4242)
    started: list[rundir.RunDir] = []

    def kill_then_a_run_starts(pid: int) -> bool:
        if not started:
            run = rundir.RunDir.create()
            fake.namespaces.add(f"mptcplab-{run.run_id}-c0")
            started.append(run)
        return fake.kill(pid)

    monkeypatch.setattr(cleanup, "_kill", kill_then_a_run_starts)
    try:
        lines = cleanup.clean_all()
        assert started, "clean killed nothing, so no run started meanwhile"
        new = started[0]
        assert new.path.is_dir(), f"clean removed the folder of a live run: {lines}"
        assert (new.path / "lock").is_file()
        assert rundir.is_alive(new.run_id)
        assert f"mptcplab-{new.run_id}-c0" not in fake.deleted, lines
        # The dead run was cleaned all the same.
        assert fake.killed == [4242]
        assert fake.deleted == [f"mptcplab-{dead.run_id}-c0"]
        assert not dead.path.exists()
        assert f"removed run directory {dead.path}" in lines
    finally:
        for run in started:
            run.remove()


def test_a_folder_that_is_not_a_run_is_left_alone_and_said_so(fake: FakeKernel) -> None:
    dead = dead_run(fake, 4242)
    root = rundir.RUN_ROOT
    (root / "notes").mkdir()
    (root / "notes" / "keep.txt").write_text("mine")
    (root / "README").write_text("not a run either")
    # Named like a run but without a lock file: a run between its mkdir and its lock.
    (root / "0123abcd").mkdir()
    lines = cleanup.clean_all()
    assert (root / "notes" / "keep.txt").read_text() == "mine"
    assert (root / "README").exists()
    assert (root / "0123abcd").is_dir()
    assert f"left {root / 'notes'} alone: not named like a run" in lines
    assert f"left {root / '0123abcd'} alone: no lock file (a run starting, or not a run)" in lines
    assert not dead.path.exists()
    assert rundir.run_ids() == []


def test_force_still_leaves_a_folder_that_is_not_a_run_alone(fake: FakeKernel) -> None:
    (rundir.RUN_ROOT).mkdir(parents=True)
    (rundir.RUN_ROOT / "notes").mkdir()
    live = rundir.RunDir.create()
    try:
        cleanup.clean_all(force=True)
        assert (rundir.RUN_ROOT / "notes").is_dir()
        assert not live.path.exists(), "--force tears down a live run"
    finally:
        live.remove()


def test_a_new_run_whose_lock_clean_took_first_picks_another_folder(
    fake: FakeKernel, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Between creating its lock file and locking it, a new run looks dead: `clean` may take
    the lock and remove the folder. The run must not go on with a lock on a removed file."""
    real_flock = rundir.fcntl.flock
    raced: list[Path] = []

    def flock(fd: int, op: int) -> None:
        if op == rundir.fcntl.LOCK_EX and not raced:
            path = Path(os.readlink(f"/proc/self/fd/{fd}")).parent
            raced.append(path)
            shutil.rmtree(path)  # what `clean` did while holding the lock
        real_flock(fd, op)

    monkeypatch.setattr(rundir.fcntl, "flock", flock)
    run = rundir.RunDir.create()
    try:
        assert raced
        assert run.path != raced[0]
        assert (run.path / "lock").is_file(), "the run holds a lock on a removed file"
        monkeypatch.setattr(rundir.fcntl, "flock", real_flock)
        assert rundir.is_alive(run.run_id)
    finally:
        run.remove()

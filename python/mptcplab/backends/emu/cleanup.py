"""``mptcplab clean``: remove what dead runs left behind, and nothing else.

A run is dead when nobody holds its lock (see :mod:`.rundir`). Each run is judged when its turn
comes, by taking its lock: a run that started while ``clean`` was busy with others holds its
lock and is left alone. Holding the lock of a dead run, this kills its linkem and traffic
processes (only processes of our two programs whose command line names the run's directory),
deletes its namespaces (``mptcplab-<run id>-…``; the TUN devices inside go with them, and with
linkem) and removes its directory. Processes and namespaces that follow our naming but whose run
directory is gone are removed too. Whatever else is in the run root is not a run and is left
alone (and said so). The coupled congestion controls' leftovers are removed by their own
cleaner, when no run is alive to use them.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import time

from mptcplab.backends.emu import kernel, netns, rundir
from mptcplab.backends.emu.addressing import run_id_of_namespace


def _kill(pid: int) -> bool:
    for sig, wait_s in ((signal.SIGTERM, 1.0), (signal.SIGKILL, 1.0)):
        try:
            os.kill(pid, sig)
        except ProcessLookupError:
            return True
        deadline = time.monotonic() + wait_s
        while time.monotonic() < deadline:
            if not os.path.exists(f"/proc/{pid}"):
                return True
            with contextlib.suppress(ChildProcessError):
                os.waitpid(pid, os.WNOHANG)
            time.sleep(0.02)
    return not os.path.exists(f"/proc/{pid}")


def _tear_down(
    run_id: str, processes: dict[int, str], namespaces: list[str], *, remove_dir: bool
) -> list[str]:
    lines: list[str] = []
    pids = {pid for pid, r in processes.items() if r == run_id}
    pids |= {pid for pid, _program in rundir.recorded_pids(run_id)}
    for pid in sorted(pids):
        # Asked again just before the kill: the pid may have been reused since the scan.
        if rundir.process_of_run(pid, run_id) and _kill(pid):
            lines.append(f"killed process {pid} of run {run_id}")
    for ns in namespaces:
        if run_id_of_namespace(ns) == run_id and netns.delete(ns):
            lines.append(f"deleted namespace {ns}")
    path = rundir.RUN_ROOT / run_id
    if remove_dir and os.path.lexists(path):
        shutil.rmtree(path, ignore_errors=True)
        if os.path.lexists(path):
            lines.append(f"could not remove run directory {path}")
        else:
            lines.append(f"removed run directory {path}")
    return lines


def clean_all(*, force: bool = False) -> list[str]:
    """Returns one line per thing removed, and one per thing in the run root left alone for not
    being a run. Needs root: without it a live run's lock cannot be opened, so the run would be
    taken for dead, and nothing of a run can be removed."""
    if os.geteuid() != 0:
        raise netns.EmulatorError("cleaning the emulator's leftovers needs root")
    lines: list[str] = []
    processes = rundir.our_processes()
    try:
        namespaces = netns.list_namespaces()
    except netns.EmulatorError:
        namespaces = []
    candidates = set(rundir.run_ids())
    candidates |= {r for r in processes.values() if rundir.is_run_id(r)}
    candidates |= {r for ns in namespaces if (r := run_id_of_namespace(ns)) is not None}
    spared = False
    for run_id in sorted(candidates):
        # The lock stays held until the run's directory is gone, so the run cannot come alive
        # (nor its id be reused) while it is being taken apart.
        with rundir.claim(run_id) as state:
            if state is rundir.Claim.NOT_A_RUN:
                continue
            if state is rundir.Claim.ALIVE and not force:
                spared = True
                continue
            lines += _tear_down(
                run_id, processes, namespaces, remove_dir=state is not rundir.Claim.GONE
            )
    for path, why in rundir.not_runs():
        lines.append(f"left {path} alone: {why}")
    module = kernel.kernel_cc_module()
    if module is not None and not spared:
        # A run that started since its turn came; asked under the loaders' lock.
        run_started = None if force else lambda: bool(rundir.live_run_ids())
        with contextlib.suppress(Exception):
            lines += module.clean_leftovers(unless=run_started)
    return lines

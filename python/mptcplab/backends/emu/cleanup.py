"""``mptcplab clean``: remove what dead runs left behind, and nothing else.

A run is dead when nobody holds its lock (see :mod:`.rundir`). For a dead run this kills its
linkem and traffic processes (only processes of our two programs whose command line names the
run's directory), deletes its namespaces (``mptcplab-<run id>-…``; the TUN devices inside go
with them, and with linkem) and removes its directory. Namespaces that follow our naming but
have no live run are removed too. The coupled congestion controls' leftovers are removed by
their own cleaner, when no run is alive to use them.
"""

from __future__ import annotations

import contextlib
import os
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


def clean_all(*, force: bool = False) -> list[str]:
    """Returns one line per thing removed. Needs root: without it a live run's lock cannot be
    opened, so the run would be taken for dead, and nothing of a run can be removed."""
    if os.geteuid() != 0:
        raise netns.EmulatorError("cleaning the emulator's leftovers needs root")
    lines: list[str] = []
    alive = set() if force else rundir.live_run_ids()
    for pid, run_id in sorted(rundir.our_processes().items()):
        if run_id not in alive and _kill(pid):
            lines.append(f"killed process {pid} of run {run_id}")
    for run_id in rundir.run_ids():
        if run_id in alive:
            continue
        for pid, _program in rundir.recorded_pids(run_id):
            if rundir.process_of_run(pid, run_id) and _kill(pid):
                lines.append(f"killed process {pid} of run {run_id}")
    try:
        namespaces = netns.list_namespaces()
    except netns.EmulatorError:
        namespaces = []
    for ns in namespaces:
        run_id = run_id_of_namespace(ns)
        if run_id is not None and run_id not in alive and netns.delete(ns):
            lines.append(f"deleted namespace {ns}")
    for run_id in rundir.run_ids():
        if run_id not in alive:
            rundir.RunDir(run_id=run_id, path=rundir.RUN_ROOT / run_id).remove()
            lines.append(f"removed run directory {rundir.RUN_ROOT / run_id}")
    module = kernel.kernel_cc_module()
    if module is not None and not alive:
        # A run that started since `alive` was taken; asked under the loaders' lock.
        run_started = None if force else lambda: bool(rundir.live_run_ids())
        with contextlib.suppress(Exception):
            lines += module.clean_leftovers(unless=run_started)
    return lines

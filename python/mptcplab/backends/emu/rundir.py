"""Where a run keeps its files and how a later ``mptcplab clean`` finds what a crash left.

Every run owns ``/run/mptcplab/emu/<run id>/``: the configuration and result files of linkem
and the traffic program, ``pids`` (one ``pid program`` line per process started) and ``lock``,
which the orchestrator holds with ``flock`` for its whole life (the descriptor is not inherited
by children). A run whose lock can be taken is dead, whatever it left behind; a run whose lock
is held is alive and is never touched.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import secrets
import shutil
from dataclasses import dataclass, field
from pathlib import Path

RUN_ROOT = Path(os.environ.get("MPTCPLAB_RUN_DIR", "/run/mptcplab/emu"))
PROGRAMS = ("linkem", "mptcp-traffic")


@dataclass
class RunDir:
    run_id: str
    path: Path
    _lock_fd: int | None = field(default=None, repr=False)

    @classmethod
    def create(cls) -> RunDir:
        RUN_ROOT.mkdir(parents=True, exist_ok=True)
        for _ in range(100):
            run_id = secrets.token_hex(4)
            path = RUN_ROOT / run_id
            try:
                path.mkdir(mode=0o700)
            except FileExistsError:
                continue
            fd = os.open(path / "lock", os.O_CREAT | os.O_RDWR | os.O_CLOEXEC, 0o600)
            fcntl.flock(fd, fcntl.LOCK_EX)
            return cls(run_id=run_id, path=path, _lock_fd=fd)
        raise RuntimeError(f"could not find a free run id under {RUN_ROOT}")

    def record_pid(self, pid: int, program: str) -> None:
        with open(self.path / "pids", "a", encoding="utf-8") as f:
            f.write(f"{pid} {program}\n")

    def remove(self) -> None:
        shutil.rmtree(self.path, ignore_errors=True)
        if self._lock_fd is not None:
            os.close(self._lock_fd)
            self._lock_fd = None


def is_alive(run_id: str) -> bool:
    """Whether the run's orchestrator still holds its lock."""
    lock = RUN_ROOT / run_id / "lock"
    try:
        fd = os.open(lock, os.O_RDWR | os.O_CLOEXEC)
    except OSError:
        return False
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        return True
    finally:
        os.close(fd)  # closing releases a lock taken here
    return False


def live_run_ids() -> set[str]:
    """The runs whose orchestrator is alive."""
    return {r for r in run_ids() if is_alive(r)}


def run_ids() -> list[str]:
    try:
        return sorted(p.name for p in RUN_ROOT.iterdir() if p.is_dir())
    except OSError:
        return []


def recorded_pids(run_id: str) -> list[tuple[int, str]]:
    try:
        lines = (RUN_ROOT / run_id / "pids").read_text().splitlines()
    except OSError:
        return []
    out = []
    for line in lines:
        pid, _, program = line.partition(" ")
        with contextlib.suppress(ValueError):
            out.append((int(pid), program))
    return out


def process_of_run(pid: int, run_id: str) -> bool:
    """Whether ``pid`` is one of our programs started for ``run_id`` (its command line names a
    file in the run's directory), so a recycled pid is never killed."""
    try:
        argv = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
    except OSError:
        return False
    if not argv or Path(argv[0].decode(errors="replace")).name not in PROGRAMS:
        return False
    marker = str(RUN_ROOT / run_id).encode()
    return any(marker in a for a in argv[1:])


def our_processes() -> dict[int, str]:
    """pid → run id of every linkem / mptcp-traffic process started for some run."""
    found: dict[int, str] = {}
    root = str(RUN_ROOT).encode() + b"/"
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            argv = (entry / "cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        if not argv or Path(argv[0].decode(errors="replace")).name not in PROGRAMS:
            continue
        for a in argv[1:]:
            if a.startswith(root):
                run_id = a[len(root) :].split(b"/", 1)[0].decode(errors="replace")
                found[int(entry.name)] = run_id
                break
    return found

"""Where a run keeps its files and how a later ``mptcplab clean`` finds what a crash left.

Every run owns ``/run/mptcplab/emu/<run id>/``: the configuration and result files of linkem
and the traffic program, ``pids`` (one ``pid program`` line per process started) and ``lock``,
which the orchestrator holds with ``flock`` for its whole life (the descriptor is not inherited
by children). A run whose lock can be taken is dead, whatever it left behind; a run whose lock
is held is alive and is never touched. Only folders named as :meth:`RunDir.create` names them and
holding a ``lock`` file are runs: anything else under the root is someone else's.
"""

from __future__ import annotations

import contextlib
import enum
import fcntl
import os
import re
import secrets
import shutil
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

RUN_ROOT = Path(os.environ.get("MPTCPLAB_RUN_DIR", "/run/mptcplab/emu"))
PROGRAMS = ("linkem", "mptcp-traffic")
LOCK = "lock"
# What RunDir.create names a run (secrets.token_hex(4)), and the namespaces' naming expects.
_RUN_ID = re.compile(r"[0-9a-f]{8}")


def is_run_id(name: str) -> bool:
    return _RUN_ID.fullmatch(name) is not None


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
            fd = os.open(path / LOCK, os.O_CREAT | os.O_RDWR | os.O_CLOEXEC, 0o600)
            fcntl.flock(fd, fcntl.LOCK_EX)
            if not _still_linked(fd, path / LOCK):
                # `clean` took the new lock before we did, so took the run for dead and removed
                # its folder: a lock on the removed file would protect nothing.
                os.close(fd)
                continue
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


def _still_linked(fd: int, path: Path) -> bool:
    """Whether ``fd`` is still the file at ``path`` (not removed, nor replaced)."""
    try:
        st = os.stat(path, follow_symlinks=False)
    except OSError:
        return False
    mine = os.fstat(fd)
    return (st.st_dev, st.st_ino) == (mine.st_dev, mine.st_ino)


class Claim(enum.Enum):
    DEAD = "dead"  # lock taken: nobody can revive the run or reuse its id until it is released
    ALIVE = "alive"  # its orchestrator holds the lock
    NOT_A_RUN = "not a run"  # something without a lock file: a run being created, or not ours
    GONE = "gone"  # nothing under that id: whatever still bears it is orphaned


@contextlib.contextmanager
def claim(run_id: str) -> Iterator[Claim]:
    """Take the run's lock without waiting and hold it for the ``with`` block, so that what is
    decided about the run stays true while its leftovers are removed (see :class:`Claim`)."""
    if not is_run_id(run_id):
        raise ValueError(f"not a run id: {run_id!r}")
    path = RUN_ROOT / run_id
    lock = path / LOCK
    while True:
        try:
            fd = os.open(lock, os.O_RDWR | os.O_NOFOLLOW | os.O_CLOEXEC)
        except OSError:
            yield Claim.NOT_A_RUN if os.path.lexists(path) else Claim.GONE
            return
        try:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                yield Claim.ALIVE
                return
            if _still_linked(fd, lock):
                yield Claim.DEAD
                return
            # Another `clean` removed the folder between our open and our lock: look again.
        finally:
            os.close(fd)  # closing releases a lock taken here


def is_alive(run_id: str) -> bool:
    """Whether the run's orchestrator still holds its lock."""
    with claim(run_id) as state:
        return state is Claim.ALIVE


def live_run_ids() -> set[str]:
    """The runs whose orchestrator is alive."""
    return {r for r in run_ids() if is_alive(r)}


def _entries() -> list[Path]:
    try:
        return sorted(RUN_ROOT.iterdir())
    except OSError:
        return []


def _not_a_run(path: Path) -> str | None:
    """Why ``path`` under the run root is not a run, or None if it is one."""
    if not is_run_id(path.name):
        return "not named like a run"
    if path.is_symlink() or not path.is_dir():
        return "not a directory"
    if not (path / LOCK).is_file():
        return "no lock file (a run starting, or not a run)"
    return None


def run_ids() -> list[str]:
    """The runs under the run root, alive or dead."""
    return [p.name for p in _entries() if _not_a_run(p) is None]


def not_runs() -> list[tuple[Path, str]]:
    """What else is under the run root, and why it is not a run."""
    return [(p, why) for p in _entries() if (why := _not_a_run(p)) is not None]


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

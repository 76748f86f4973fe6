"""Starting and stopping the native programs (linkem, mptcp-traffic) of a run.

Each program prints one JSON line ``{"ready": true, ...}`` on standard output once set up, and
exits by itself when its parent dies (PR_SET_PDEATHSIG, checked against ``LINKEM_PARENT_PID``).
Their standard error goes to a file in the run directory so a failure can be quoted.
"""

from __future__ import annotations

import contextlib
import json
import os
import selectors
import shutil
import signal
import subprocess
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from mptcplab.backends.emu.netns import EmulatorError
from mptcplab.backends.emu.rundir import RunDir

BINARIES = ("linkem", "mptcp-traffic")


def _repo_root() -> Path:
    return Path(__file__).resolve().parents[4]


def find_binary(name: str) -> Path | None:
    """``$MPTCPLAB_BIN_DIR``, ``$CARGO_TARGET_DIR/release``, ``<repo>/target/release``, then
    ``PATH``."""
    candidates = []
    if d := os.environ.get("MPTCPLAB_BIN_DIR"):
        candidates.append(Path(d) / name)
    if d := os.environ.get("CARGO_TARGET_DIR"):
        candidates.append(Path(d) / "release" / name)
    candidates.append(_repo_root() / "target" / "release" / name)
    for c in candidates:
        if c.is_file() and os.access(c, os.X_OK):
            return c
    found = shutil.which(name)
    return Path(found) if found else None


def require_binary(name: str) -> Path:
    path = find_binary(name)
    if path is None:
        raise EmulatorError(
            f"the {name} program is not built: run `make build` "
            "(or cargo build --release -p linkem)"
        )
    return path


class Program:
    """One native process of a run."""

    def __init__(
        self, rundir: RunDir, name: str, argv: list[str], label: str | None = None
    ) -> None:
        """``name`` names its files in the run directory; ``label``, what messages call it
        (by default the name)."""
        self.name = name
        self.label = label or name
        self.stderr_path = rundir.path / f"{name}.err"
        with open(self.stderr_path, "wb") as err:
            self.proc = subprocess.Popen(
                argv,
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=err,
                env={**os.environ, "LINKEM_PARENT_PID": str(os.getpid())},
                text=True,
            )
        rundir.record_pid(self.proc.pid, Path(argv[0]).name)

    def stderr_tail(self, lines: int = 5) -> str:
        try:
            text = self.stderr_path.read_text(errors="replace").strip()
        except OSError:
            return ""
        return "\n".join(text.splitlines()[-lines:])

    def _failed(self, what: str) -> EmulatorError:
        tail = self.stderr_tail()
        return EmulatorError(f"{self.label} {what}" + (f": {tail}" if tail else ""))

    def failure(self, status: int) -> EmulatorError:
        """The error of an exit with ``status`` (``Popen.returncode``: minus the signal that
        ended it, such as `mptcplab clean --force`'s SIGTERM)."""
        if status < 0:
            try:
                how = f"was killed by {signal.Signals(-status).name}"
            except ValueError:
                how = f"was killed by signal {-status}"
        else:
            how = f"exited with status {status}"
        return self._failed(how)

    def wait_ready(self, timeout_s: float) -> dict[str, Any]:
        assert self.proc.stdout is not None
        sel = selectors.DefaultSelector()
        sel.register(self.proc.stdout, selectors.EVENT_READ)
        try:
            if not sel.select(timeout_s):
                raise self._failed(f"was not ready within {timeout_s:g} s")
            line = self.proc.stdout.readline()
        finally:
            sel.close()
        if not line:
            self.proc.wait(timeout=5)
            raise self.failure(self.proc.returncode)
        try:
            msg = json.loads(line)
        except json.JSONDecodeError:
            raise self._failed(f"printed {line!r} instead of its ready line") from None
        if not msg.get("ready"):
            raise self._failed(f"is not ready: {line.strip()}")
        return msg

    def send(self, line: str) -> None:
        assert self.proc.stdin is not None
        try:
            self.proc.stdin.write(line + "\n")
            self.proc.stdin.flush()
        except BrokenPipeError:
            raise self._failed("exited early") from None

    def signal(self, sig: int) -> None:
        if self.proc.poll() is None:
            with contextlib.suppress(ProcessLookupError):
                self.proc.send_signal(sig)

    def wait(self, timeout_s: float) -> int:
        try:
            return self.proc.wait(timeout=timeout_s)
        except subprocess.TimeoutExpired:
            raise self._failed(f"did not finish within {timeout_s:g} s") from None

    def stop(self, timeout_s: float = 5.0) -> None:
        """SIGTERM, then SIGKILL if it lingers."""
        if self.proc.poll() is None:
            self.signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout=timeout_s)
            except subprocess.TimeoutExpired:
                self.signal(signal.SIGKILL)
                self.proc.wait(timeout=timeout_s)
        for stream in (self.proc.stdin, self.proc.stdout):
            if stream is not None:
                with contextlib.suppress(OSError):
                    stream.close()


def read_json(path: Path) -> dict[str, Any]:
    try:
        return json.loads(path.read_text())
    except (OSError, json.JSONDecodeError) as exc:
        raise EmulatorError(f"cannot read {path}: {exc}") from None


def wait_for_file(
    path: Path, predicate: Callable[[dict[str, Any]], bool], timeout_s: float
) -> dict[str, Any]:
    """Poll a JSON file written atomically until ``predicate(data)`` holds."""
    deadline = time.monotonic() + timeout_s
    while True:
        if path.exists():
            with contextlib.suppress(OSError, json.JSONDecodeError):
                data = json.loads(path.read_text())
                if predicate(data):
                    return data
        if time.monotonic() > deadline:
            raise EmulatorError(f"{path.name} was not written within {timeout_s:g} s")
        time.sleep(0.005)

"""The library's runs and the interpreter's signals and exit: ``sim.run`` in a notebook stops at
Ctrl-C whether or not it reports progress, and a thread still simulating when the interpreter
exits lets the process end cleanly."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

# About two minutes of simulation here: far longer than the waits below, so a run that did not
# stop would be seen as one.
LONG = (
    '{"duration_s": 20000, "links": [{"id": "l", "capacity_mbps": 1000, "delay_ms": 5}],'
    ' "flows": [{"id": "f", "protocol": "tcp", "paths": [["l"]]}]}'
)


def _python(script: str, timeout_s: float) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ, PYTHONPATH=str(ROOT / "python"))
    return subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, env=env, timeout=timeout_s
    )


@pytest.mark.parametrize("progress", ["None", "lambda *a: None", "max"])
def test_ctrl_c_stops_a_run_with_or_without_progress(progress: str) -> None:
    """Without a callback the run never visited Python, and Ctrl-C came after its end; a
    builtin callback runs no bytecode, so no signal was checked either."""
    script = f"""
import json, os, signal, threading
from mptcplab import sim
threading.Timer(1.0, lambda: os.kill(os.getpid(), signal.SIGINT)).start()
try:
    sim.run(json.loads({LONG!r}), progress={progress})
except KeyboardInterrupt:
    print("interrupted")
short = {{"duration_s": 1, "links": [{{"id": "l", "capacity_mbps": 1, "delay_ms": 5}}],
         "flows": [{{"id": "f", "protocol": "tcp", "paths": [["l"]]}}]}}
print("after", sim.run(short).flows[0].goodput_mbps > 0)
"""
    out = _python(script, timeout_s=60)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["interrupted", "after", "True"]


@pytest.mark.parametrize("progress", ["None", "lambda *a: None"])
def test_an_interpreter_exiting_beside_a_simulating_thread_ends_cleanly(progress: str) -> None:
    """A daemon thread that took the GIL during the interpreter's exit was ended by CPython
    with pthread_exit, whose unwinding through the extension aborted the process (SIGABRT)."""
    # The object whose finaliser sleeps holds the interpreter in its finalisation for a
    # while, with the GIL free: the thread's next visit to Python falls there.
    script = f"""
import json, threading, time
from mptcplab import sim
class SlowToGo:
    def __del__(self):
        time.sleep(0.5)
keep = SlowToGo()
threading.Thread(
    target=sim.run, args=(json.loads({LONG!r}),), kwargs={{"progress": {progress}}}, daemon=True
).start()
time.sleep(0.5)
print("main exits")
"""
    out = _python(script, timeout_s=60)
    assert out.returncode == 0, (out.returncode, out.stderr)
    assert out.stdout.strip() == "main exits" and "FATAL" not in out.stderr

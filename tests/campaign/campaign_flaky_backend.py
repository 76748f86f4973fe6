"""A backend for the failure tests: the real simulator, except that every run fails while the
environment variable MPTCPLAB_TEST_FAIL is set (workers inherit the environment)."""

from __future__ import annotations

import os
import signal
from typing import Any

from mptcplab.campaign.backends import run_sim, sim_version
from mptcplab.errors import UserError


def run(scenario: dict[str, Any]) -> dict[str, Any]:
    if os.environ.get("MPTCPLAB_TEST_FAIL") == "user":
        raise UserError(
            "injected refusal", field="flows[0].cc", also=(UserError("and more", field="seed"),)
        )
    if os.environ.get("MPTCPLAB_TEST_FAIL"):
        raise RuntimeError("injected failure")
    return run_sim(scenario)


def version() -> str:
    return sim_version()


def crash(scenario: dict[str, Any]) -> dict[str, Any]:
    """Kill the worker process outright (as a crash in native code would) for OLIA runs while
    MPTCPLAB_TEST_CRASH is set."""
    if os.environ.get("MPTCPLAB_TEST_CRASH") and scenario["flows"][0]["cc"] == "olia":
        os._exit(3)
    return run_sim(scenario)


def born_deaf_to_ctrl_c(scenario: dict[str, Any]) -> dict[str, Any]:
    """The real simulator, in a worker that must have started with SIGINT blocked (its
    initializer ignores SIGINT later; a worker born able to take it could die of a Ctrl-C
    while it still imported the library)."""
    if signal.SIGINT not in signal.pthread_sigmask(signal.SIG_BLOCK, set()):
        raise RuntimeError("this worker started with SIGINT deliverable")
    return run_sim(scenario)


def leaves(scenario: dict[str, Any]) -> dict[str, Any]:
    """OLIA runs raise what MPTCPLAB_TEST_LEAVE names: ``exit`` SystemExit(3), ``interrupt``
    KeyboardInterrupt (as an emulated run does on SIGTERM)."""
    how = os.environ.get("MPTCPLAB_TEST_LEAVE")
    if how and scenario["flows"][0]["cc"] == "olia":
        if how == "exit":
            raise SystemExit(3)
        raise KeyboardInterrupt
    return run_sim(scenario)


def slow(scenario: dict[str, Any]) -> dict[str, Any]:
    """The real simulator after MPTCPLAB_TEST_SLOW_S seconds, noting the worker's pid first
    in the folder MPTCPLAB_TEST_PIDS (one empty file per run started)."""
    import time
    from pathlib import Path

    folder = os.environ.get("MPTCPLAB_TEST_PIDS")
    if folder:
        (Path(folder) / f"{os.getpid()}-{time.monotonic_ns()}").touch()
    time.sleep(float(os.environ.get("MPTCPLAB_TEST_SLOW_S", "0")))
    return run_sim(scenario)


def crash_slowly(scenario: dict[str, Any]) -> dict[str, Any]:
    """OLIA runs kill their worker after 0.2 s, LIA runs last MPTCPLAB_TEST_SLOW_S seconds: an
    interruption then finds the runner re-running suspects alone."""
    import time

    if scenario["flows"][0]["cc"] == "olia":
        time.sleep(0.2)
        os._exit(9)
    time.sleep(float(os.environ.get("MPTCPLAB_TEST_SLOW_S", "0")))
    return run_sim(scenario)

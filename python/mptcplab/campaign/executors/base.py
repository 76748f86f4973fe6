"""The executor interface and the task every executor runs.

A task is pure: a scenario (with its seed) and a backend reference go in, a report and the run's
metrics come out, or the error text when the backend failed. Executors only decide where tasks
run; they never touch the store — the runner commits each outcome as it arrives.
"""

from __future__ import annotations

import time
import traceback
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import Any, Protocol

from mptcplab.analysis.metrics import run_metrics
from mptcplab.campaign.backends import import_ref
from mptcplab.campaign.store import RunOutcome
from mptcplab.errors import UserError


@dataclass(frozen=True)
class Task:
    run_key: str
    backend_ref: str  # "module:function" of the backend's run callable
    scenario: dict[str, Any]


def execute(task: Task) -> RunOutcome:
    """Run one task; never raises for a failing backend (the failure is the outcome)."""
    started = time.perf_counter()
    try:
        report = import_ref(task.backend_ref)(task.scenario)
        metrics = run_metrics(report, task.scenario)
    except (KeyboardInterrupt, SystemExit):
        raise
    except UserError as exc:
        # Already a message for the user (where and what was expected); its class adds nothing.
        return _failed(task, str(exc), started)
    except BaseException as exc:
        return _failed(task, _exception_text(exc), started)
    return RunOutcome(task.run_key, True, metrics, report, None, time.perf_counter() - started)


def _exception_text(exc: BaseException) -> str:
    return "".join(traceback.format_exception_only(type(exc), exc)).strip()


def _failed(task: Task, error: str, started: float) -> RunOutcome:
    return RunOutcome(task.run_key, False, None, None, error, time.perf_counter() - started)


def execute_in_worker(task: Task) -> RunOutcome:
    """:func:`execute` in a worker process of an executor: a backend's ``SystemExit`` or
    ``KeyboardInterrupt`` (an emulated run turns a SIGTERM into one to clean up) ends that run,
    not the campaign. The runner learns of its own interruption by itself; before, a worker's
    ``KeyboardInterrupt`` reached it as one and stopped the campaign, and a ``SystemExit`` ended
    it with nothing said, the run not recorded either way."""
    started = time.perf_counter()
    try:
        return execute(task)
    except (KeyboardInterrupt, SystemExit) as exc:
        return _failed(task, f"the backend raised {_exception_text(exc)}", started)


class Executor(Protocol):
    """Runs tasks somewhere and yields their outcomes as they finish (in any order)."""

    name: str
    workers: int

    def run(self, tasks: Iterable[Task]) -> Iterator[RunOutcome]: ...

    def close(self) -> None:
        """Stop everything still running; outcomes not yet yielded are lost (and re-run next
        time, since they were never committed)."""
        ...

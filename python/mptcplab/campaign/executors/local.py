"""Local executor: a pool of worker processes on this machine, one per core by default.

Workers are started with ``spawn`` (no fork of a process that runs a progress-bar thread) and
ignore SIGINT: Ctrl-C reaches the runner, which stops the pool at once. At most two tasks per
worker are queued, so an interruption loses only the runs in flight. A worker that dies (a crash
in native code) fails the runs it may have been executing; the pool is rebuilt and the campaign
goes on.
"""

from __future__ import annotations

import multiprocessing
import os
import signal
from collections.abc import Iterable, Iterator
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait
from concurrent.futures.process import BrokenProcessPool

from mptcplab.campaign.executors.base import Task, execute
from mptcplab.campaign.store import RunOutcome
from mptcplab.errors import UserError

_QUEUED_PER_WORKER = 2


def _ignore_sigint() -> None:
    signal.signal(signal.SIGINT, signal.SIG_IGN)


def default_jobs() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        return os.cpu_count() or 1


class LocalExecutor:
    name = "local"

    def __init__(self, *, jobs: int | None = None, serial: bool = False) -> None:
        if jobs is not None and jobs < 1:
            raise UserError(f"expected --jobs ≥ 1, got {jobs}", field="--jobs")
        self.workers = jobs if jobs is not None else (1 if serial else default_jobs())
        self._pool: ProcessPoolExecutor | None = None

    def _new_pool(self) -> ProcessPoolExecutor:
        return ProcessPoolExecutor(
            max_workers=self.workers,
            mp_context=multiprocessing.get_context("spawn"),
            initializer=_ignore_sigint,
        )

    def run(self, tasks: Iterable[Task]) -> Iterator[RunOutcome]:
        pending = iter(tasks)
        in_flight: dict[Future[RunOutcome], Task] = {}
        self._pool = self._new_pool()
        exhausted = False
        while True:
            while not exhausted and len(in_flight) < self.workers * _QUEUED_PER_WORKER:
                task = next(pending, None)
                if task is None:
                    exhausted = True
                    break
                in_flight[self._pool.submit(execute, task)] = task
            if not in_flight:
                return
            done, _ = wait(in_flight, return_when=FIRST_COMPLETED)
            broken = False
            for future in done:
                task = in_flight.pop(future)
                try:
                    yield future.result()
                except BrokenProcessPool:
                    broken = True
                    yield RunOutcome(
                        task.run_key, False, None, None, "the worker process died", 0.0
                    )
            if broken:
                # Every other queued future fails the same way; they are resubmitted, not failed.
                requeue = list(in_flight.values())
                in_flight.clear()
                self._pool.shutdown(wait=False, cancel_futures=True)
                self._pool = self._new_pool()
                for task in requeue:
                    in_flight[self._pool.submit(execute, task)] = task

    def close(self) -> None:
        pool, self._pool = self._pool, None
        if pool is None:
            return
        # Workers may be in the middle of a long run: stop them rather than wait for it.
        processes = list(getattr(pool, "_processes", {}).values())
        pool.shutdown(wait=False, cancel_futures=True)
        for process in processes:
            if process.is_alive():
                process.terminate()
        for process in processes:
            process.join(timeout=5)

"""Local executor: a pool of worker processes on this machine, one per core by default.

Workers are started with ``spawn`` (no fork of a process that runs a progress-bar thread) and
ignore SIGINT: Ctrl-C reaches the runner, which stops the pool at once. At most two tasks per
worker are queued, so an interruption loses only the runs in flight. A worker that dies (a crash
in native code) breaks the pool and every run queued in it, and which one crashed is not known:
each of them runs again alone, in a pool of its own, and only a run that crashes alone fails.
Then the pool is rebuilt and the campaign goes on. A worker whose runner is gone (killed
outright) stops itself.
"""

from __future__ import annotations

import multiprocessing
import os
import signal
import threading
import time
from collections.abc import Iterable, Iterator
from concurrent.futures import ALL_COMPLETED, FIRST_COMPLETED, Future, ProcessPoolExecutor, wait
from concurrent.futures.process import BrokenProcessPool

from mptcplab.campaign.executors.base import Task, execute_in_worker
from mptcplab.campaign.store import RunOutcome
from mptcplab.errors import UserError

_QUEUED_PER_WORKER = 2


# How often a worker checks that the runner that started it is alive.
_PARENT_CHECK_S = 0.5


def _start_worker() -> None:
    """A worker's initializer: ignore SIGINT, and stop when the runner is gone."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    threading.Thread(
        target=_stop_when_orphaned, args=(os.getppid(),), name="parent-watch", daemon=True
    ).start()


def _stop_when_orphaned(parent: int) -> None:
    """A runner killed outright (SIGKILL, an out-of-memory kill) leaves its workers behind:
    they hold both ends of the pool's queues, never see them close, and went on starting the
    runs queued to them, whose results nobody would store, an emulated one beside the next
    campaign's. When the worker's parent changes it sends itself SIGTERM, which a simulated run
    dies of and an emulated one turns into its cleanup. (Not PR_SET_PDEATHSIG: that follows the
    thread that started the worker, not the runner.)"""
    while os.getppid() == parent:
        time.sleep(_PARENT_CHECK_S)
    os.kill(os.getpid(), signal.SIGTERM)


def _submit(pool: ProcessPoolExecutor, task: Task) -> Future[RunOutcome]:
    """Submit ``task``; the pool starts its workers here when it needs them. They start with
    SIGINT blocked, as this thread has it meanwhile: Ctrl-C reaches the whole process group,
    and a worker still importing the library (its initializer, which ignores SIGINT, not run
    yet) died of it with a traceback. Blocked, not ignored, here: a Ctrl-C meanwhile waits
    for the runner rather than being lost."""
    blocked = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})
    try:
        return pool.submit(execute_in_worker, task)
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, blocked)


def default_jobs() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        return os.cpu_count() or 1


def _outcome(future: Future[RunOutcome], task: Task) -> tuple[RunOutcome, bool]:
    """The run's outcome, and whether its worker died (which breaks the whole pool)."""
    try:
        return future.result(), False
    except BrokenProcessPool:
        return RunOutcome(task.run_key, False, None, None, "the worker process died", 0.0), True


def _settle(
    futures: Iterable[Future[RunOutcome]],
    in_flight: dict[Future[RunOutcome], Task],
    suspects: list[Task],
) -> Iterator[RunOutcome]:
    """The outcomes of ``futures``, taken out of ``in_flight``; a run whose worker died is put
    among ``suspects`` instead."""
    for future in futures:
        task = in_flight.pop(future)
        outcome, died = _outcome(future, task)
        if died:
            suspects.append(task)
        else:
            yield outcome


class LocalExecutor:
    name = "local"

    def __init__(self, *, jobs: int | None = None, serial: bool = False) -> None:
        if jobs is not None and jobs < 1:
            raise UserError(f"expected --jobs ≥ 1, got {jobs}", field="--jobs")
        self.workers = jobs if jobs is not None else (1 if serial else default_jobs())
        self._pool: ProcessPoolExecutor | None = None

    def _new_pool(self, workers: int | None = None) -> ProcessPoolExecutor:
        return ProcessPoolExecutor(
            max_workers=workers or self.workers,
            mp_context=multiprocessing.get_context("spawn"),
            initializer=_start_worker,
        )

    def run(self, tasks: Iterable[Task]) -> Iterator[RunOutcome]:
        source = iter(tasks)
        held: Task | None = None  # taken from the source, refused by a broken pool
        in_flight: dict[Future[RunOutcome], Task] = {}
        self._pool = self._new_pool()
        while True:
            broken = False
            while len(in_flight) < self.workers * _QUEUED_PER_WORKER:
                if held is not None:
                    task, held = held, None
                else:
                    task = next(source, None)
                if task is None:
                    break
                try:
                    in_flight[_submit(self._pool, task)] = task
                except BrokenProcessPool:
                    held, broken = task, True
                    break
            if not in_flight and not broken:
                return
            # A broken pool fails every run queued in it, and which one crashed is unknown: they
            # are suspects, each run again alone (once: a run that crashes alone fails).
            suspects: list[Task] = []
            done, _ = wait(in_flight, return_when=ALL_COMPLETED if broken else FIRST_COMPLETED)
            yield from _settle(done, in_flight, suspects)
            if broken or suspects:
                yield from _settle(wait(in_flight).done, in_flight, suspects)
                self._pool.shutdown(wait=False, cancel_futures=True)
                for task in suspects:
                    yield self._alone(task)
                self._pool = self._new_pool()

    def _alone(self, task: Task) -> RunOutcome:
        """Run ``task`` in a pool of one worker of its own (kept as ``_pool`` meanwhile, so that
        Ctrl-C stops it too: an interruption leaves the pool as it is, for :meth:`close` to
        terminate its worker, which a shutdown here would have left running)."""
        self._pool = self._new_pool(1)
        outcome, died = _outcome(_submit(self._pool, task), task)
        self._pool.shutdown(wait=False, cancel_futures=True)
        if died:
            return RunOutcome(
                task.run_key, False, None, None, "the worker process died running it alone", 0.0
            )
        return outcome

    def close(self) -> None:
        pool, self._pool = self._pool, None
        if pool is None:
            return
        # Workers may be in the middle of a long run: stop them rather than wait for it. A pool
        # already shut down (a run alone was being stopped) has None there.
        processes = list((getattr(pool, "_processes", None) or {}).values())
        pool.shutdown(wait=False, cancel_futures=True)
        for process in processes:
            if process.is_alive():
                process.terminate()
        for process in processes:
            process.join(timeout=5)

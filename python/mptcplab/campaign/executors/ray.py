"""Ray executor: the same pure tasks, sent to a Ray cluster (``--executor ray --address A``).

Ray is an optional extra (``pip install 'mptcplab[ray]'``) imported only here. Every node needs
mptcplab installed, since tasks name their backend by import reference. At most two tasks per
cluster CPU are submitted at a time, so an interruption loses only the runs in flight.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import Any

from mptcplab.campaign.executors.base import Task, execute
from mptcplab.campaign.store import RunOutcome
from mptcplab.errors import UserError

_QUEUED_PER_WORKER = 2


def require_ray() -> Any:
    """The ray module, or a UserError saying how to install it."""
    try:
        import ray
    except ImportError:
        raise UserError(
            "the Ray executor needs Ray, which is not installed; install the optional extra "
            "with: pip install 'mptcplab[ray]'",
            field="--executor",
        ) from None
    return ray


class RayExecutor:
    name = "ray"

    def __init__(self, *, address: str | None, jobs: int | None) -> None:
        if jobs is not None and jobs < 1:
            raise UserError(f"expected --jobs ≥ 1, got {jobs}", field="--jobs")
        self._ray = require_ray()
        try:
            self._ray.init(address=address, ignore_reinit_error=True, log_to_driver=False)
        except (ConnectionError, ValueError, RuntimeError) as exc:
            raise UserError(
                f"cannot connect to the Ray cluster at {address or 'auto'} ({exc})",
                field="--address",
            ) from None
        self.workers = jobs or max(1, int(self._ray.cluster_resources().get("CPU", 1)))
        self._remote = self._ray.remote(execute)
        self._in_flight: dict[Any, Task] = {}

    def run(self, tasks: Iterable[Task]) -> Iterator[RunOutcome]:
        pending = iter(tasks)
        exhausted = False
        while True:
            while not exhausted and len(self._in_flight) < self.workers * _QUEUED_PER_WORKER:
                task = next(pending, None)
                if task is None:
                    exhausted = True
                    break
                self._in_flight[self._remote.remote(task)] = task
            if not self._in_flight:
                return
            ready, _ = self._ray.wait(list(self._in_flight), num_returns=1)
            for ref in ready:
                task = self._in_flight.pop(ref)
                try:
                    yield self._ray.get(ref)
                except self._ray.exceptions.RayError as exc:
                    yield RunOutcome(task.run_key, False, None, None, f"Ray: {exc}", 0.0)

    def close(self) -> None:
        for ref in self._in_flight:
            self._ray.cancel(ref, force=True)
        self._in_flight.clear()
        self._ray.shutdown()

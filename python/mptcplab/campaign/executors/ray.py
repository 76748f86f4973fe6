"""Ray executor: the same pure tasks, sent to a Ray cluster (``--executor ray --address A``).

Ray is an optional extra (``pip install 'mptcplab[ray]'``) imported only here. Every node needs
mptcplab installed, since tasks name their backend by import reference. At most two tasks per
cluster CPU are submitted at a time, so an interruption loses only the runs in flight.

A serial backend (the emulator, whose runs share the CPU that forwards their packets) runs one
run at a time on each node, whatever --jobs says: each of its runs asks Ray for as many CPUs as
the largest node has, so that no node holds two. On a cluster of unequal nodes the smaller ones
stay idle.
"""

from __future__ import annotations

import logging
import socket
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


#: How long the reachability check waits for the cluster's port; Ray itself retries an address
#: nobody listens at for minutes.
_REACH_TIMEOUT_S = 5.0
#: Ray 2.59 and later start clusters with token authentication, and a driver that is not told
#: to use it is refused with only a log line saying why.
_AUTH_HINT = (
    "; if the cluster uses token authentication (the default of `ray start` from Ray 2.59), set "
    "RAY_AUTH_MODE=token here, with the cluster's token in RAY_AUTH_TOKEN or ~/.ray/auth_token"
)


def _host_port(address: str) -> tuple[str, int] | None:
    """(host, port) of a ``host:port`` or ``ray://host:port`` address; None for ``auto`` or a
    form this check does not know (Ray judges those)."""
    rest = address.removeprefix("ray://")
    host, sep, port = rest.rpartition(":")
    if not sep or not host or not port.isdigit():
        return None
    return host.strip("[]"), int(port)


def check_reachable(address: str) -> None:
    """Refuse at once an address where nothing accepts connections."""
    target = _host_port(address)
    if target is None:
        return
    try:
        socket.create_connection(target, timeout=_REACH_TIMEOUT_S).close()
    except OSError as exc:
        reason = exc.strerror or str(exc) or "timed out"
        raise UserError(
            f"cannot connect to the Ray cluster at {address}: {reason.lower()}; start one "
            "there with `ray start --head`, or leave --address out to start Ray on this machine",
            field="--address",
        ) from None


class RayExecutor:
    name = "ray"

    def __init__(self, *, address: str | None, jobs: int | None, serial: bool = False) -> None:
        if jobs is not None and jobs < 1:
            raise UserError(f"expected --jobs ≥ 1, got {jobs}", field="--jobs")
        # make_executor, which builds this, has checked the address (check_executor).
        self._ray = require_ray()
        try:
            # Ray's INFO lines ("Started a local Ray instance.") would break into the progress
            # bar; its warnings (an unauthenticated cluster) are kept.
            self._ray.init(
                address=address,
                ignore_reinit_error=True,
                log_to_driver=False,
                logging_level=logging.WARNING,
            )
        except (ConnectionError, ValueError, RuntimeError) as exc:
            raise UserError(
                f"cannot connect to the Ray cluster at {address or 'auto'} ({exc})"
                + (_AUTH_HINT if address is not None else ""),
                field="--address",
            ) from None
        self._remote = self._ray.remote(execute)
        if serial:
            cpus = [
                float(node["Resources"].get("CPU", 0))
                for node in self._ray.nodes()
                if node.get("Alive")
            ]
            whole = max(cpus, default=0.0)
            if whole < 1:
                self._ray.shutdown()
                raise UserError(
                    f"the Ray cluster at {address or 'auto'} has no node with a CPU yet, and "
                    "this campaign's backend runs one run at a time on a node, taking all of "
                    "its CPUs; start the cluster's nodes first",
                    field="--address",
                )
            self._remote = self._remote.options(num_cpus=whole)
            self.workers = jobs or sum(1 for c in cpus if c >= whole)
        else:
            self.workers = jobs or max(1, int(self._ray.cluster_resources().get("CPU", 1)))
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

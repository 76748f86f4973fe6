"""Executors: where a campaign's runs execute. ``local`` (a process pool on this machine, the
default) and ``ray`` (a Ray cluster, optional extra) share the interface of :mod:`.base`."""

from __future__ import annotations

from mptcplab.campaign.executors.base import Executor, Task, execute
from mptcplab.errors import UserError

EXECUTORS = ("local", "ray")


def check_executor(name: str, *, address: str | None) -> None:
    """Refuse an executor choice that cannot work, before any run and whether or not there is
    work left: a campaign that is already complete must not make a typo look valid."""
    if name not in EXECUTORS:
        raise UserError(
            f"unknown executor '{name}'; expected one of: {', '.join(EXECUTORS)}",
            field="--executor",
        )
    if name == "local" and address is not None:
        raise UserError("--address is for --executor ray", field="--address")
    if name == "ray":
        from mptcplab.campaign.executors.ray import check_reachable, require_ray

        require_ray()
        # Here, before a store is made or its plan replaced for a cluster that is not there.
        if address is not None:
            check_reachable(address)


def make_executor(name: str, *, jobs: int | None, address: str | None, serial: bool) -> Executor:
    """Build the executor called ``name`` (``--executor``)."""
    check_executor(name, address=address)
    if name == "ray":
        from mptcplab.campaign.executors.ray import RayExecutor

        return RayExecutor(address=address, jobs=jobs, serial=serial)
    from mptcplab.campaign.executors.local import LocalExecutor

    return LocalExecutor(jobs=jobs, serial=serial)


__all__ = ["EXECUTORS", "Executor", "Task", "check_executor", "execute", "make_executor"]

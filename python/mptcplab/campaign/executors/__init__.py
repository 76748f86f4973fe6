"""Executors: where a campaign's runs execute. ``local`` (a process pool on this machine, the
default) and ``ray`` (a Ray cluster, optional extra) share the interface of :mod:`.base`."""

from __future__ import annotations

from mptcplab.campaign.executors.base import Executor, Task, execute
from mptcplab.errors import UserError

EXECUTORS = ("local", "ray")


def make_executor(name: str, *, jobs: int | None, address: str | None, serial: bool) -> Executor:
    """Build the executor called ``name`` (``--executor``)."""
    if name == "local":
        if address is not None:
            raise UserError("--address is for --executor ray", field="--address")
        from mptcplab.campaign.executors.local import LocalExecutor

        return LocalExecutor(jobs=jobs, serial=serial)
    if name == "ray":
        from mptcplab.campaign.executors.ray import RayExecutor

        return RayExecutor(address=address, jobs=jobs)
    raise UserError(
        f"unknown executor '{name}'; expected one of: {', '.join(EXECUTORS)}", field="--executor"
    )


__all__ = ["EXECUTORS", "Executor", "Task", "execute", "make_executor"]

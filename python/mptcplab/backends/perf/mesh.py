"""A mesh file: the hosts of a NorNet-style measurement and their addresses (one per path or
provider), so that every host runs the same command and measures towards all the others.

    [[hosts]]
    name = "oslo"
    addresses = ["10.1.0.2", "10.2.0.2"]

    [[hosts]]
    name = "tromso"
    addresses = ["10.1.1.2", "10.2.1.2"]

Each host runs ``mptcplab perf server`` and ``mptcplab perf gain --mesh FILE``; its TCP
transfers leave from each of its own addresses to each address of the other hosts (of the same
address family), its MPTCP transfers go unbound to each of them. The host is found by name
(``--host``) or, without one, as the host whose addresses are all on this machine.
"""

from __future__ import annotations

import ipaddress
import os
import socket
from collections.abc import Callable

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from mptcplab.errors import UserError
from mptcplab.scenario.load import load_document, validation_error
from mptcplab.tomlloc import line_of


class MeshHost(BaseModel):
    model_config = ConfigDict(extra="forbid")

    name: str = Field(min_length=1, description="The host's name in the matrix.")
    addresses: list[str] = Field(
        min_length=1, description="The host's addresses, one per path (IPv4 or IPv6)."
    )


class Mesh(BaseModel):
    model_config = ConfigDict(extra="forbid")

    hosts: list[MeshHost] = Field(min_length=2, description="The hosts, two at least.")

    def destinations_from(self, me: MeshHost) -> list[str]:
        return [a for h in self.hosts if h is not me for a in h.addresses]


def load_mesh(path: str | os.PathLike[str]) -> Mesh:
    data, text, syntax = load_document(path)
    file = str(path)
    try:
        mesh = Mesh.model_validate(data)
    except ValidationError as exc:
        raise validation_error(exc, file=file, text=text, syntax=syntax, root=Mesh) from None
    problems = []
    names: dict[str, int] = {}
    owner: dict[str, int] = {}
    for i, host in enumerate(mesh.hosts):
        if host.name in names:
            problems.append(
                UserError(
                    f"host name '{host.name}' is also host {names[host.name] + 1}'s",
                    file=file,
                    line=line_of(text, ("hosts", i, "name")),
                    field=f"hosts[{i}].name",
                )
            )
        names.setdefault(host.name, i)
        for j, address in enumerate(host.addresses):
            where = {
                "file": file,
                "line": line_of(text, ("hosts", i, "addresses")),
                "field": f"hosts[{i}].addresses[{j}]",
            }
            try:
                canonical = str(ipaddress.ip_address(address))
            except ValueError:
                problems.append(UserError(f"expected an IP address, got '{address}'", **where))
                continue
            if canonical in owner:
                other = mesh.hosts[owner[canonical]].name
                problems.append(UserError(f"address {address} is also {other}'s", **where))
            owner.setdefault(canonical, i)
    if problems:
        raise UserError.several(problems)
    return mesh


def _is_local(address: str) -> bool:
    family = socket.AF_INET6 if ":" in address else socket.AF_INET
    with socket.socket(family, socket.SOCK_STREAM) as probe:
        try:
            probe.bind((address, 0))
        except OSError:
            return False
    return True


def this_host(
    mesh: Mesh, name: str | None, *, is_local: Callable[[str], bool] = _is_local
) -> MeshHost:
    """The mesh's entry for this machine: by ``name``, else the one host whose addresses are
    all local here."""
    names = ", ".join(h.name for h in mesh.hosts)
    if name is not None:
        for host in mesh.hosts:
            if host.name == name:
                return host
        raise UserError(f"no host named '{name}' in the mesh (hosts: {names})", field="--host")
    mine = [h for h in mesh.hosts if all(is_local(a) for a in h.addresses)]
    if len(mine) == 1:
        return mine[0]
    found = (
        "none of the hosts has all its addresses on this machine"
        if not mine
        else "hosts " + ", ".join(h.name for h in mine) + " all have their addresses here"
    )
    raise UserError(
        f"which host is this? {found}; give --host NAME (hosts: {names})", field="--host"
    )

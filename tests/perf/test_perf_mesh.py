"""Mesh files: hosts and their addresses, checked with file and line; this machine's entry
found by name or by its addresses; each host's series from the same file."""

from __future__ import annotations

from pathlib import Path

import pytest

from mptcplab.backends.perf import gain
from mptcplab.backends.perf.mesh import load_mesh, this_host
from mptcplab.errors import UserError

MESH = """\
[[hosts]]
name = "oslo"
addresses = ["10.1.0.2", "10.2.0.2", "2001:db8::2"]

[[hosts]]
name = "tromso"
addresses = ["10.1.1.2", "2001:db8:1::2"]
"""


def write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "mesh.toml"
    path.write_text(text)
    return path


def test_each_host_measures_towards_every_address_of_the_others(tmp_path: Path) -> None:
    mesh = load_mesh(write(tmp_path, MESH))
    oslo = this_host(mesh, "oslo")
    assert mesh.destinations_from(oslo) == ["10.1.1.2", "2001:db8:1::2"]
    keys = [t.key for t in gain.plan(mesh.destinations_from(oslo), oslo.addresses, runs=1)]
    # TCP only between addresses of one family; MPTCP, unbound, to every destination.
    assert keys == [
        ("10.1.1.2", "tcp", "10.1.0.2"),
        ("10.1.1.2", "tcp", "10.2.0.2"),
        ("10.1.1.2", "mptcp", "*"),
        ("2001:db8:1::2", "tcp", "2001:db8::2"),
        ("2001:db8:1::2", "mptcp", "*"),
    ]


@pytest.mark.parametrize(
    ("text", "says"),
    [
        (
            MESH.replace('"tromso"', '"oslo"'),
            "mesh.toml:6: hosts[1].name: host name 'oslo' is also host 1's",
        ),
        (
            MESH.replace('"10.1.1.2"', '"10.1.0.2"'),
            "mesh.toml:7: hosts[1].addresses[0]: address 10.1.0.2 is also oslo's",
        ),
        (
            MESH.replace('"10.1.1.2"', '"10.1.1"'),
            "mesh.toml:7: hosts[1].addresses[0]: expected an IP address, got '10.1.1'",
        ),
        (MESH.replace('addresses = ["10.1.1', 'adresses = ["10.1.1'), "did you mean 'addresses'"),
        (MESH[: MESH.index("\n\n")], "hosts: expected at least 2 items, got 1"),
        (MESH.replace('["10.1.1.2", "2001:db8:1::2"]', "[]"), "expected at least 1 item, got 0"),
    ],
)
def test_a_bad_mesh_is_refused_where_it_is_wrong(tmp_path: Path, text: str, says: str) -> None:
    with pytest.raises(UserError) as err:
        load_mesh(write(tmp_path, text))
    assert says in str(err.value)


def test_this_host_is_found_by_its_addresses(tmp_path: Path) -> None:
    mesh = load_mesh(write(tmp_path, MESH))
    local = {"10.1.1.2", "2001:db8:1::2"}
    assert this_host(mesh, None, is_local=local.__contains__).name == "tromso"
    with pytest.raises(UserError, match="none of the hosts has all its addresses on this"):
        this_host(mesh, None, is_local=lambda a: False)
    with pytest.raises(UserError, match="hosts oslo, tromso all have their addresses here"):
        this_host(mesh, None, is_local=lambda a: True)
    with pytest.raises(UserError, match=r"no host named 'bergen' in the mesh \(hosts: oslo, "):
        this_host(mesh, "bergen")

"""The Ray executor on real Ray: a local instance it starts itself, and a cluster started with
`ray start` that it joins by address (token authentication on, as Ray 2.59+ does by default).
Either must store what the local process pool stores, run for run. Skipped where Ray, an
optional extra, is not installed (`make test` installs it)."""

from __future__ import annotations

import json
import os
import re
import secrets
import socket
import sqlite3
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from mptcplab.campaign import load, run_campaign
from mptcplab.campaign.store import decompress_json

# The `run_cli` fixture of tests/conftest.py.
CliRunner = Callable[..., subprocess.CompletedProcess[str]]

ray = pytest.importorskip(
    "ray", reason="Ray is an optional extra (pip install 'mptcplab[ray]'), not installed here"
)


def _stored(store: Path) -> dict[tuple[str, str], dict[str, Any]]:
    """Each run's status, seed, metrics and report, without the wall time that varies."""
    db = sqlite3.connect(store)
    db.row_factory = sqlite3.Row
    try:
        rows = db.execute("SELECT * FROM runs").fetchall()
    finally:
        db.close()
    stored = {}
    for row in rows:
        report = decompress_json(row["report"])
        report.pop("wall_s")
        stored[(row["run_key"], row["role"])] = {
            "status": row["status"],
            "seed": row["seed"],
            "metrics": json.loads(row["metrics"]),
            "report": report,
        }
    return stored


def test_ray_stores_what_the_local_pool_stores(write_campaign, tmp_path: Path) -> None:
    campaign = load(write_campaign())
    by_ray = run_campaign(campaign, executor="ray", output=tmp_path / "ray.sqlite", progress=False)
    local = run_campaign(campaign, jobs=2, output=tmp_path / "local.sqlite", progress=False)
    assert (by_ray.planned, by_ray.completed, by_ray.failed) == (12, 12, 0)
    assert not ray.is_initialized(), "the executor leaves Ray shut down"
    assert _stored(by_ray.store) == _stored(local.store)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.fixture
def ray_cluster() -> Iterator[tuple[str, dict[str, str]]]:
    """A one-machine cluster from `ray start --head`: its address and the environment a driver
    needs to join it."""
    port = _free_port()
    env = {**os.environ, "RAY_AUTH_MODE": "token", "RAY_AUTH_TOKEN": secrets.token_hex(16)}
    ray_cli = str(Path(sys.executable).with_name("ray"))
    started = subprocess.run(
        [ray_cli, "start", "--head", f"--port={port}", "--num-cpus=2", "--disable-usage-stats"],
        capture_output=True,
        text=True,
        timeout=180,
        env=env,
        check=False,
    )
    assert started.returncode == 0, started.stderr[-2000:]
    try:
        yield f"127.0.0.1:{port}", env
    finally:
        subprocess.run([ray_cli, "stop", "--force"], capture_output=True, timeout=120, env=env)


def test_a_local_instance_started_from_the_command_line_keeps_its_info_lines_quiet(
    write_campaign, tmp_path: Path, run_cli: CliRunner
) -> None:
    done = run_cli(
        "run", str(write_campaign()), "--executor", "ray", "-o", str(tmp_path / "s.sqlite")
    )
    assert done.returncode == 0, done.stderr[-2000:]
    # Ray logs "Started a local Ray instance." at INFO, which would break into the bar.
    assert not re.search(r"\sINFO\s", done.stderr), done.stderr[-2000:]


def test_a_campaign_joins_a_cluster_by_address(
    write_campaign, tmp_path: Path, ray_cluster: tuple[str, dict[str, str]], run_cli: CliRunner
) -> None:
    address, env = ray_cluster
    path = write_campaign()
    store = tmp_path / "cluster.sqlite"
    done = run_cli(
        "run",
        str(path),
        "--executor",
        "ray",
        "--address",
        address,
        "-o",
        str(store),
        "-q",
        env=env,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert "12 completed now, 0 failed" in done.stdout + done.stderr
    local = run_campaign(load(path), jobs=2, output=tmp_path / "local.sqlite", progress=False)
    assert _stored(store) == _stored(local.store)


def test_an_address_nobody_listens_at_is_refused_at_once(
    write_campaign, tmp_path: Path, run_cli: CliRunner
) -> None:
    address = f"127.0.0.1:{_free_port()}"  # bound a moment ago, now closed: refused
    done = run_cli(
        "run",
        str(write_campaign()),
        "--executor",
        "ray",
        "--address",
        address,
        "-o",
        str(tmp_path / "s.sqlite"),
    )
    assert done.returncode == 2
    assert f"--address: cannot connect to the Ray cluster at {address}: connection refused" in (
        done.stderr
    )
    assert "Traceback" not in done.stderr

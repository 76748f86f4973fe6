"""A store this process cannot write, such as an archive in a read-only folder, is read all the
same. SQLite reads a WAL store through a -shm file it makes beside it; where it cannot, the
reading commands called the store "not a campaign store". Root may write anywhere, so as root
the reader runs without its capabilities (util-linux's setpriv), held to the files' modes."""

from __future__ import annotations

import os
import shutil
import sqlite3
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest
from campaign_cases import SMALL_CAMPAIGN


def _status_as_reader(store: Path, cli) -> tuple[int, str, str]:
    if os.geteuid() != 0:
        return cli("status", str(store))
    setpriv = shutil.which("setpriv")
    if setpriv is None:
        pytest.skip("running as root without setpriv (util-linux) to drop root's capabilities")
    done = subprocess.run(
        [
            setpriv,
            "--bounding-set=-all",
            "--inh-caps=-all",
            str(Path(sys.executable).parent / "mptcplab"),
            "status",
            str(store),
        ],
        capture_output=True,
        text=True,
        env={**os.environ, "NO_COLOR": "1"},
        check=False,
    )
    return done.returncode, done.stdout, done.stderr


def test_a_store_in_a_folder_the_reader_cannot_write_is_read(ran_campaign, cli) -> None:
    _, store = ran_campaign(SMALL_CAMPAIGN, "small")
    code, expected, err = cli("status", str(store))
    assert code == 0, err
    top = Path(tempfile.mkdtemp(prefix="mptcplab-archive-"))
    archive = top / "archive"
    try:
        archive.mkdir()
        copy = archive / "store.sqlite"
        shutil.copy(store, copy)
        copy.chmod(0o444)
        archive.chmod(0o555)
        code, out, err = _status_as_reader(copy, cli)
        assert code == 0, err
        assert "not a campaign store" not in err
        counts = [line for line in expected.splitlines() if "runs planned" in line]
        assert counts and counts[0] in out, (expected, out)
        assert sorted(p.name for p in archive.iterdir()) == ["store.sqlite"]
    finally:
        archive.chmod(0o755)
        shutil.rmtree(top)


def test_a_read_only_store_is_read_with_its_write_ahead_log_or_refused(ran_campaign, cli) -> None:
    """A killed campaign, or one still running, leaves most of its runs in the store's
    write-ahead log (-wal). Read as an immutable file, the store showed the runs of its last
    checkpoint only. It is now read with the log where the log's -shm file is there, and
    refused, saying why, where it is not."""
    path, store = ran_campaign(SMALL_CAMPAIGN, "small")
    # An open connection keeps the log: the second run's runs stay in it.
    holder = sqlite3.connect(store)
    holder.execute("SELECT count(*) FROM runs").fetchone()
    path.write_text(SMALL_CAMPAIGN.replace("replications = 2", "replications = 4"))
    code, _, err = cli("run", str(path), "-q")
    assert code == 0, err
    code, expected, err = cli("status", str(store))
    assert code == 0, err
    counts = next(line for line in expected.splitlines() if "runs planned" in line)
    log = store.with_name("store.sqlite-wal")
    assert log.stat().st_size > 0
    top = Path(tempfile.mkdtemp(prefix="mptcplab-archive-"))
    try:
        for name, files in (("whole", ("", "-wal", "-shm")), ("no-shm", ("", "-wal"))):
            archive = top / name
            archive.mkdir()
            for suffix in files:
                copy = archive / f"store.sqlite{suffix}"
                shutil.copy(store.with_name(f"store.sqlite{suffix}"), copy)
                copy.chmod(0o444)
            archive.chmod(0o555)
        code, out, err = _status_as_reader(top / "whole" / "store.sqlite", cli)
        assert code == 0, err
        assert counts in out, (expected, out)
        code, out, err = _status_as_reader(top / "no-shm" / "store.sqlite", cli)
        assert code != 0 and "runs are still in its write-ahead log store.sqlite-wal" in err
        assert "Traceback" not in err
    finally:
        holder.close()
        for archive in top.iterdir():
            archive.chmod(0o755)
        shutil.rmtree(top)

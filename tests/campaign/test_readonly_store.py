"""A store this process cannot write, such as an archive in a read-only folder, is read all the
same. SQLite reads a WAL store through a -shm file it makes beside it; where it cannot, the
reading commands called the store "not a campaign store". Root may write anywhere, so as root
the reader runs without its capabilities (util-linux's setpriv), held to the files' modes."""

from __future__ import annotations

import os
import shutil
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

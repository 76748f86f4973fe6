"""A store whose file was damaged (a disk error, a copy cut short, a stray write) is reported as
damaged, naming the file and how SQLite recovers what is left, by every command that reads or
writes it: never a traceback from deep inside SQLite."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest
from campaign_cases import SMALL_CAMPAIGN

SMALL = SMALL_CAMPAIGN.replace("replications = 2", "replications = 1").replace(
    "duration_s = 1.0", "duration_s = 0.5"
)


def _damage_the_runs_table(store: Path) -> None:
    """Overwrite the pages where the runs table (and its index) begins, as a stray write
    would: the store still opens, but reading a run meets a page SQLite cannot parse."""
    db = sqlite3.connect(store)
    try:
        page_size = int(db.execute("PRAGMA page_size").fetchone()[0])
        roots = [
            int(r[0])
            for r in db.execute("SELECT rootpage FROM sqlite_master WHERE tbl_name = 'runs'")
        ]
    finally:
        db.close()
    with store.open("r+b") as file:
        for root in roots:
            file.seek((root - 1) * page_size)
            file.write(b"\xff" * page_size)


@pytest.fixture
def damaged(write_campaign, cli, tmp_path: Path) -> tuple[Path, Path]:
    """(campaign file, its store, damaged after a complete run)."""
    store = tmp_path / "store.sqlite"
    path = write_campaign(SMALL.replace("[design]", f'output = "{store}"\n\n[design]'))
    code, _, err = cli("run", str(path), "-q")
    assert code == 0, err
    _damage_the_runs_table(store)
    return path, store


@pytest.mark.parametrize(
    "command",
    [
        ["status", "{store}"],
        ["status", "{campaign}"],
        ["export", "{store}", "--csv", "{tmp}/runs.csv"],
        ["run", "{campaign}", "-q"],
    ],
    ids=["status-store", "status-campaign", "export", "run"],
)
def test_a_damaged_store_is_a_message_naming_it_and_its_recovery(
    damaged: tuple[Path, Path], cli, tmp_path: Path, command: list[str]
) -> None:
    campaign, store = damaged
    args = [a.format(store=store, campaign=campaign, tmp=tmp_path) for a in command]
    code, _, err = cli(*args)
    assert code == 2, err
    said = " ".join(err.split())
    assert f"error: {store}: damaged store (database disk image is malformed)" in said
    assert f'sqlite3 {store} ".recover" | sqlite3 recovered.sqlite' in said

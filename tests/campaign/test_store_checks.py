"""A store that is damaged, foreign, empty, another campaign's or not a file is refused in one
message naming it (exit code 2, no traceback), and a file that is not a campaign store is left
byte for byte as it was, by the reading commands and by ``run`` alike."""

from __future__ import annotations

import shutil
import sqlite3
from collections.abc import Callable
from pathlib import Path

import pytest
from campaign_cases import SMALL_CAMPAIGN

from mptcplab.campaign.store import Store
from mptcplab.errors import UserError

READERS: list[Callable[[Path, Path], tuple[str, ...]]] = [
    lambda store, tmp: ("status", str(store)),
    lambda store, tmp: ("report", str(store), "-o", str(tmp / "report.html")),
    lambda store, tmp: ("export", str(store), "--csv", str(tmp / "runs.csv")),
]


def _refused(result: tuple[int, str, str], *words: str) -> str:
    code, _, err = result
    assert code == 2, err
    assert "Traceback" not in err, err
    assert len(err.strip().splitlines()) == 1, err
    for word in words:
        assert word in err, err
    return err


def _damaged_copy(store: Path, name: str, *statements: str) -> Path:
    copy = store.with_name(name)
    shutil.copy(store, copy)
    db = sqlite3.connect(copy, isolation_level=None)
    for statement in statements:
        db.execute(statement)
    db.close()
    return copy


def test_a_damaged_store_is_refused_naming_what_is_damaged(
    ran_campaign, cli, tmp_path: Path
) -> None:
    _, store = ran_campaign(SMALL_CAMPAIGN, "small")
    no_runs = _damaged_copy(store, "no-runs.sqlite", "DROP TABLE runs")
    for reader in READERS:
        _refused(cli(*reader(no_runs, tmp_path)), str(no_runs), "damaged store: no runs table")
    assert not (tmp_path / "report.html").exists() and not (tmp_path / "runs.csv").exists()

    version = _damaged_copy(
        store, "version.sqlite", "UPDATE meta SET value = 'abc' WHERE key = 'format_version'"
    )
    _refused(cli("status", str(version)), str(version), "damaged store", "'abc'", "whole number")

    column = _damaged_copy(store, "column.sqlite", "ALTER TABLE tasks DROP COLUMN seed")
    _refused(cli("status", str(column)), "damaged store: table tasks lacks column seed")

    no_meta = _damaged_copy(store, "no-meta.sqlite", "DROP TABLE meta")
    _refused(cli("status", str(no_meta)), "not a campaign store", "without a meta table")

    (key,) = sqlite3.connect(store).execute("SELECT min(run_key) FROM runs").fetchone()
    metrics = _damaged_copy(
        store, "metrics.sqlite", f"UPDATE runs SET metrics = '{{not json' WHERE run_key = '{key}'"
    )
    for reader in READERS[1:]:
        _refused(
            cli(*reader(metrics, tmp_path)),
            str(metrics),
            f"damaged store: the metrics of run {key}",
        )

    listed = _damaged_copy(
        store, "listed.sqlite", f"UPDATE runs SET metrics = '[1, 2]' WHERE run_key = '{key}'"
    )
    _refused(cli(*READERS[2](listed, tmp_path)), f"the metrics of run {key} is a list")

    blobs = _damaged_copy(
        store,
        "blobs.sqlite",
        f"UPDATE runs SET report = x'00ff', scenario = x'00ff' WHERE run_key = '{key}'",
    )
    with Store(blobs) as opened:
        for read, what in ((opened.report, "report"), (opened.scenario, "scenario")):
            with pytest.raises(UserError, match=f"damaged store: the {what} of run {key}"):
                read(key)


def test_a_campaign_file_whose_output_is_another_campaigns_store_is_refused(
    ran_campaign, cli, write_campaign, tmp_path: Path
) -> None:
    _, store = ran_campaign(SMALL_CAMPAIGN, "small")
    other = write_campaign(
        SMALL_CAMPAIGN.replace('name = "small"', 'name = "other"').replace(
            "[design]", f'output = "{store}"\n\n[design]'
        ),
        "other.toml",
    )
    before = store.read_bytes()
    for reader in READERS:
        err = _refused(cli(*reader(other, tmp_path)), "belongs to campaign 'small', not 'other'")
        assert err.startswith(f"error: {other}: output:"), err
    assert not (tmp_path / "report.html").exists() and not (tmp_path / "runs.csv").exists()
    _refused(cli("run", str(other), "-q"), "belongs to campaign 'small', not 'other'")
    assert store.read_bytes() == before
    # The store given directly is read as it is, whichever campaign wrote it.
    code, out, err = cli("status", str(store))
    assert code == 0 and "small" in out, err
    # Reading leaves no -wal or -shm file behind (a read-only SQLite connection would).
    assert [p.name for p in store.parent.iterdir()] == ["store.sqlite"]


def test_run_refuses_a_file_that_is_not_a_campaign_store_and_leaves_it_unchanged(
    write_campaign, cli, tmp_path: Path
) -> None:
    path = write_campaign()
    foreign = tmp_path / "other.sqlite"
    db = sqlite3.connect(foreign)
    db.execute("CREATE TABLE foo (x INTEGER)")
    db.execute("INSERT INTO foo VALUES (1)")
    db.commit()
    db.close()
    text = tmp_path / "notes.sqlite"
    text.write_text("my notes, not a database\n")
    for target, why in ((foreign, "without a meta table"), (text, "not an SQLite database")):
        before = target.read_bytes()
        _refused(
            cli("run", str(path), "-q", "-o", str(target)),
            f"error: {target}: not a campaign store",
            why,
            "choose another output path",
        )
        assert target.read_bytes() == before
        _refused(cli("status", str(target)), str(target), "not a campaign store", why)
        assert target.read_bytes() == before
    assert sorted(p.name for p in tmp_path.iterdir()) == [
        "campaign.toml",
        "notes.sqlite",
        "other.sqlite",
    ]


def test_reading_an_empty_file_refuses_it_without_writing_it(
    write_campaign, cli, tmp_path: Path
) -> None:
    empty = tmp_path / "empty.sqlite"
    empty.touch()
    for reader in READERS:
        _refused(cli(*reader(empty, tmp_path)), str(empty), "not a campaign store (empty file)")
        assert empty.stat().st_size == 0
    assert sorted(p.name for p in tmp_path.iterdir()) == ["empty.sqlite"]
    # run makes its store in an empty file (one made beforehand with touch or mktemp).
    code, _, err = cli("run", str(write_campaign()), "-q", "-o", str(empty))
    assert code == 0, err
    code, out, err = cli("status", str(empty))
    assert code == 0 and "done (100 %)" in out, err


def test_a_store_where_none_can_be_is_refused_saying_why(
    write_campaign, cli, tmp_path: Path
) -> None:
    path = write_campaign()
    folder = tmp_path / "dir.sqlite"
    folder.mkdir()
    _refused(
        cli("run", str(path), "-q", "-o", str(folder)),
        f"error: {folder}: cannot create the store: it is a directory",
    )
    for reader in READERS:
        _refused(cli(*reader(folder, tmp_path)), str(folder), "is a directory")
    outside = write_campaign(
        SMALL_CAMPAIGN.replace("[design]", f'output = "{folder}"\n\n[design]'), "dir.toml"
    )
    for reader in READERS:
        _refused(cli(*reader(outside, tmp_path)), str(folder), "is a directory")
    assert list(folder.iterdir()) == []
    if Path("/proc/self").is_dir():  # a folder of Linux's that takes no new file
        _refused(
            cli("run", str(path), "-q", "-o", "/proc/mptcplab-store.sqlite"),
            "error: /proc/mptcplab-store.sqlite: cannot create the store: ",
        )

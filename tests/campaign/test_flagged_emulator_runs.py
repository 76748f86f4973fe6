"""Emulator runs whose fidelity check found the emulator, not the network, to be the bottleneck
are stored as done (they ran) but do not measure the kernel: status and the report say how many
there are, where before only a cross-validation's own table told."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from campaign_cases import SMALL_CAMPAIGN

from mptcplab.campaign.store import Store, compress_json


def _flag(store: Path, count: int) -> None:
    # ``count`` finished runs made emulator runs the emulator could not keep up with; their
    # reports keep the rest of what the simulator wrote.
    db = sqlite3.connect(store, isolation_level=None)
    keys = sorted(k for (k,) in db.execute("SELECT run_key FROM runs WHERE status = 'done'"))
    with Store(store) as opened:
        reports = {k: opened.report(k) for k in keys[:count]}
    for key, report in reports.items():
        report = {**(report or {}), "fidelity": {"emulation_bottleneck": True, "problems": ["x"]}}
        db.execute(
            "UPDATE runs SET backend = 'emu', report = ? WHERE run_key = ?",
            (compress_json(report), key),
        )
    db.close()


def test_status_and_the_report_count_runs_the_emulator_bottlenecked(
    ran_campaign, cli, tmp_path: Path
) -> None:
    _, store = ran_campaign(SMALL_CAMPAIGN, "small")
    code, out, err = cli("status", str(store))
    assert code == 0 and "flagged" not in out, err
    _flag(store, 2)
    code, out, err = cli("status", str(store))
    assert code == 0, err
    assert "2 of the runs done were flagged" in " ".join(out.split()), out
    code, _, err = cli("report", str(store), "-o", str(tmp_path / "r.html"))
    assert code == 0, err
    html = (tmp_path / "r.html").read_text()
    assert "2 of the runs done flagged: the emulator, not the network" in html

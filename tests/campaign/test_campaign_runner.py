"""The runner and its store, on real simulations: every run committed once, re-runs skip what is
done and retry what failed, a killed campaign resumes without duplicates or changed results."""

from __future__ import annotations

import io
import json
import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest
from campaign_cases import SMALL_CAMPAIGN
from rich.console import Console

import mptcplab
from mptcplab.analysis.metrics import run_metrics
from mptcplab.analysis.report import build_report
from mptcplab.campaign import Store, load, run_campaign
from mptcplab.campaign import runner as runner_module
from mptcplab.campaign.backends import BACKENDS, Backend, register
from mptcplab.campaign.executors import make_executor
from mptcplab.campaign.store import RunOutcome, TaskRow, decompress_json
from mptcplab.errors import UserError


def _run(path: Path, **kwargs):
    campaign = load(path)
    return run_campaign(campaign, output=path.parent / "store.sqlite", progress=False, **kwargs)


def _runs(store_path: Path) -> list[sqlite3.Row]:
    db = sqlite3.connect(store_path)
    db.row_factory = sqlite3.Row
    try:
        return db.execute("SELECT * FROM runs ORDER BY run_key").fetchall()
    finally:
        db.close()


def test_campaign_runs_everything_once_and_a_rerun_skips_it(write_campaign) -> None:
    path = write_campaign()
    first = _run(path, jobs=2)
    assert (first.planned, first.already_done, first.completed, first.failed) == (12, 0, 12, 0)
    second = _run(path, jobs=2)
    assert (second.planned, second.already_done, second.completed) == (12, 12, 0)

    rows = _runs(first.store)
    assert len(rows) == 12
    assert all(r["status"] == "done" and r["attempts"] == 1 for r in rows)
    for row in rows:
        report = decompress_json(row["report"])
        scenario = decompress_json(row["scenario"])
        metrics = json.loads(row["metrics"])
        assert report["seed"] == row["seed"] == scenario["seed"]
        assert metrics["goodput_mbps"] == pytest.approx(
            sum(f["goodput_mbps"] for f in report["flows"])
        )
        assert row["wall_s"] > 0

    with Store(first.store) as store:
        (entry,) = store.provenance()  # the second invocation had nothing to run
        assert store.counts() == {"planned": 12, "done": 12, "failed": 0, "pending": 0}
    assert entry["campaign_text"] == path.read_text()
    assert entry["mptcplab_version"] == mptcplab.__version__
    assert entry["backend"] == "sim" and "mpsim" in entry["backend_version"]
    assert entry["ended_at"] is not None and entry["completed_runs"] == 12
    assert entry["host"]
    assert entry["git_revision"]  # the tests run in a git checkout


@pytest.fixture
def flaky_campaign(write_campaign, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The small campaign on a backend that fails as MPTCPLAB_TEST_FAIL tells it to."""
    monkeypatch.setitem(
        BACKENDS,
        "flaky",
        Backend("flaky", "campaign_flaky_backend:run", "campaign_flaky_backend:version"),
    )
    return write_campaign(SMALL_CAMPAIGN.replace("metrics =", 'backend = "flaky"\nmetrics ='))


def test_failed_runs_are_stored_with_their_error_and_retried(
    flaky_campaign: Path, cli, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = flaky_campaign
    monkeypatch.setenv("MPTCPLAB_TEST_FAIL", "1")
    code, _, err = cli("run", str(path), "-o", str(path.parent / "store.sqlite"), "-q")
    assert code == 1
    assert "12 runs failed" in " ".join(err.split())
    rows = _runs(path.parent / "store.sqlite")
    assert len(rows) == 12
    assert all(r["status"] == "failed" for r in rows)
    assert all("RuntimeError: injected failure" in r["error"] for r in rows)
    assert all(r["report"] is None and r["metrics"] is None for r in rows)

    monkeypatch.delenv("MPTCPLAB_TEST_FAIL")
    retry = _run(path, jobs=2)
    assert (retry.already_done, retry.completed, retry.failed) == (0, 12, 0)
    rows = _runs(retry.store)
    assert len(rows) == 12
    assert all(r["status"] == "done" and r["attempts"] == 2 and r["report"] for r in rows)


def test_a_refused_run_is_stored_and_shown_as_its_message(
    flaky_campaign: Path, cli, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = flaky_campaign
    store = path.parent / "store.sqlite"
    monkeypatch.setenv("MPTCPLAB_TEST_FAIL", "user")
    code, _, _ = cli("run", str(path), "-o", str(store), "-q")
    assert code == 1
    stored = "flows[0].cc: injected refusal\nseed: and more"
    assert all(r["error"] == stored for r in _runs(store))
    code, out, _ = cli("status", str(store))
    assert code == 0
    assert "UserError" not in out, out
    # The first problem leads; the others are counted, not shown in place of it.
    assert "flows[0].cc: injected refusal (+1 more lines in the store)" in " ".join(out.split())


def test_a_crashing_worker_fails_its_runs_and_the_campaign_goes_on(
    write_campaign, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(
        BACKENDS,
        "crashy",
        Backend("crashy", "campaign_flaky_backend:crash", "campaign_flaky_backend:version"),
    )
    path = write_campaign(SMALL_CAMPAIGN.replace("metrics =", 'backend = "crashy"\nmetrics ='))
    monkeypatch.setenv("MPTCPLAB_TEST_CRASH", "1")
    first = _run(path, jobs=2)
    assert first.completed + first.failed == 12
    rows = _runs(first.store)
    assert len(rows) == 12
    olia = [r for r in rows if '"olia"' in r["variant"]]
    assert len(olia) == 6
    assert all(r["status"] == "failed" and "died running it alone" in r["error"] for r in olia)
    # A LIA run queued beside a crashing one broke with the pool; run again alone, it is done.
    assert all(r["status"] == "done" for r in rows if r not in olia)
    assert (first.completed, first.failed) == (6, 6)

    monkeypatch.delenv("MPTCPLAB_TEST_CRASH")
    second = _run(path, jobs=2)
    assert second.already_done + second.completed == 12 and second.failed == 0


def test_workers_start_with_ctrl_c_blocked(write_campaign, monkeypatch: pytest.MonkeyPatch) -> None:
    """Ctrl-C reaches the whole process group; a worker that took it before its initializer
    ignored SIGINT died with a traceback. Workers now start with SIGINT blocked (the backend
    below fails a run in a worker that did not)."""
    monkeypatch.setitem(
        BACKENDS,
        "deaf",
        Backend(
            "deaf",
            "campaign_flaky_backend:born_deaf_to_ctrl_c",
            "campaign_flaky_backend:version",
        ),
    )
    path = write_campaign(SMALL_CAMPAIGN.replace("metrics =", 'backend = "deaf"\nmetrics ='))
    summary = _run(path, jobs=2)
    assert (summary.completed, summary.failed) == (12, 0), _runs(summary.store)[0]["error"]


def test_same_campaign_gives_the_same_results_in_another_store(write_campaign, tmp_path) -> None:
    path = write_campaign()
    campaign = load(path)
    a = run_campaign(campaign, output=tmp_path / "a.sqlite", progress=False, jobs=2)
    b = run_campaign(campaign, output=tmp_path / "b.sqlite", progress=False, jobs=1)
    rows_a = {r["run_key"]: r["metrics"] for r in _runs(a.store)}
    rows_b = {r["run_key"]: r["metrics"] for r in _runs(b.store)}
    assert rows_a == rows_b and len(rows_a) == 12


# 10 points × 2 variants × 2 replications = 40 runs of 30 simulated seconds at 30–60 Mbit/s.
RESUME_CAMPAIGN = """\
name = "resume"
seed = 3
replications = 2
metrics = ["goodput_mbps"]

[design]
kind = "lhs"
points = 10
options = { optimize = false }

[scenario]
template = "two_path"
duration_s = 30.0

[factors.cap0]
low = 30.0
high = 60.0
param = "capacity_mbps[0]"

[factors.cap1]
low = 30.0
high = 60.0
param = "capacity_mbps[1]"

[factors.cc]
levels = ["lia", "olia"]
"""


def _start(path: Path, store: Path, jobs: int) -> subprocess.Popen[bytes]:
    return subprocess.Popen(
        [
            sys.executable,
            "-m",
            "mptcplab.cli",
            "run",
            str(path),
            "-o",
            str(store),
            "-j",
            str(jobs),
            "-q",
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        start_new_session=True,  # its own process group: the kill reaches its workers too
        # A shell starts background jobs with SIGINT ignored, and Python then keeps ignoring
        # it; give the runner the default disposition a terminal would.
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )


def _done_metrics(store: Path) -> dict[str, str]:
    if not store.exists():
        return {}
    db = sqlite3.connect(store, timeout=10)
    try:
        return dict(db.execute("SELECT run_key, metrics FROM runs WHERE status = 'done'"))
    except sqlite3.OperationalError:  # tables not created yet
        return {}
    finally:
        db.close()


def _wait_for_runs(process: subprocess.Popen[bytes], store: Path, count: int) -> dict[str, str]:
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        done = _done_metrics(store)
        if len(done) >= count:
            return done
        if process.poll() is not None:
            raise AssertionError(f"runner exited early: {process.stderr.read().decode()}")
        time.sleep(0.02)
    raise AssertionError("no progress within two minutes")


def test_campaign_killed_with_sigkill_resumes_without_duplicates(write_campaign, tmp_path) -> None:
    path = write_campaign(RESUME_CAMPAIGN)
    store = tmp_path / "resume.sqlite"
    process = _start(path, store, jobs=1)
    try:
        _wait_for_runs(process, store, 5)
    finally:
        os.killpg(process.pid, signal.SIGKILL)
        process.wait()
    before = _done_metrics(store)
    assert 5 <= len(before) < 40, "the kill must land mid-way"

    restarted = _start(path, store, jobs=2)
    assert restarted.wait(timeout=300) == 0, restarted.stderr.read().decode()

    rows = _runs(store)
    assert len(rows) == 40
    assert len({r["run_key"] for r in rows}) == 40
    assert all(r["status"] == "done" and r["attempts"] == 1 for r in rows)
    after = {r["run_key"]: r["metrics"] for r in rows}
    assert {k: after[k] for k in before} == before
    with Store(store) as s:
        history = s.provenance()
        assert len(history) == 2
        assert history[0]["ended_at"] is None  # killed: never closed
        assert history[1]["ended_at"] is not None
        assert history[0]["completed_runs"] == len(before)
        assert history[1]["completed_runs"] == 40 - len(before)
        assert s.counts()["done"] == 40


def _assert_group_ends(pgid: int) -> None:
    """The runner stopped its workers: its process group empties (helpers exit on their own
    once the runner is gone, within a few seconds)."""
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:
        try:
            os.killpg(pgid, 0)
        except ProcessLookupError:
            return
        time.sleep(0.05)
    os.killpg(pgid, signal.SIGKILL)
    raise AssertionError("worker processes outlived the interrupted runner")


def test_sigint_stops_the_campaign_and_keeps_what_finished(write_campaign, tmp_path) -> None:
    path = write_campaign(RESUME_CAMPAIGN)
    store = tmp_path / "interrupt.sqlite"
    process = _start(path, store, jobs=2)
    try:
        _wait_for_runs(process, store, 3)
        process.send_signal(signal.SIGINT)  # the runner alone, as a terminal's Ctrl-C would
        code = process.wait(timeout=60)
    finally:
        if process.poll() is None:
            os.killpg(process.pid, signal.SIGKILL)
    assert code == 130
    assert "interrupted" in process.stderr.read().decode()
    _assert_group_ends(process.pid)
    with Store(store) as s:
        (entry,) = s.provenance()
        assert entry["ended_at"] is not None
        done = s.counts()["done"]
    assert 3 <= done < 40
    assert entry["completed_runs"] == done


def test_an_interrupt_just_after_a_commit_counts_that_run(
    write_campaign, tmp_path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from mptcplab.campaign import CampaignInterrupted

    path = write_campaign()
    record = Store.record

    def record_then_interrupt(self: Store, *args, **kwargs) -> None:
        record(self, *args, **kwargs)
        if self.counts()["done"] == 2:
            raise KeyboardInterrupt  # Ctrl-C as the second run's commit returns

    monkeypatch.setattr(Store, "record", record_then_interrupt)
    with pytest.raises(CampaignInterrupted) as stop:
        _run(path, jobs=1)
    assert stop.value.summary.completed == 2
    with Store(path.parent / "store.sqlite") as s:
        assert s.counts()["done"] == 2


def test_status_and_export_commands(write_campaign, cli, tmp_path) -> None:
    path = write_campaign()
    summary = _run(path, jobs=2)
    code, out, _ = cli("status", str(summary.store))
    assert code == 0
    assert "12 runs planned" in out and "12 done" in out and "0 pending" in out
    # Each record on lines of its own, none wrapped in a log (the backend version whole).
    assert all(len(line) <= 120 for line in out.splitlines()), out
    (version_line,) = [line for line in out.splitlines() if "mpsim" in line]
    assert "(report format " in version_line, out

    # The same campaign with a fourth point: the stored runs count, the new ones are pending.
    more = write_campaign(
        SMALL_CAMPAIGN.replace("points = 3", "points = 4").replace(
            "[design]", f'output = "{summary.store}"\n\n[design]'
        ),
        "more.toml",
    )
    code, out, _ = cli("status", str(more))
    assert code == 0
    assert "16 runs planned" in out and "pending" in out

    csv_path = tmp_path / "runs.csv"
    code, _, err = cli("export", str(summary.store), "--csv", str(csv_path))
    assert code == 0, err
    import pandas as pd

    frame = pd.read_csv(csv_path)
    assert len(frame) == 12
    assert {"cap0", "cap1", "cc", "goodput_mbps", "aggregation_benefit", "seed"} <= set(frame)
    parquet_path = tmp_path / "runs.parquet"
    code, _, _ = cli("export", str(summary.store), "--parquet", str(parquet_path))
    assert code == 0
    assert pd.read_parquet(parquet_path).shape == frame.shape
    code, _, err = cli("export", str(summary.store))
    assert code == 2 and "exactly one of --csv" in err
    # `--csv -`: the same table on standard output, the count on standard error, no file "-".
    code, out, err = cli("export", str(summary.store), "--csv", "-")
    assert code == 0 and "wrote 12 runs to standard output" in err
    pd.testing.assert_frame_equal(pd.read_csv(io.StringIO(out)), frame)
    assert not Path("-").exists()
    code, out, err = cli("export", str(summary.store), "--parquet", "-")
    assert code == 2 and out == "" and "Parquet is binary" in err


def test_report_and_export_take_the_campaign_file_for_its_store(
    write_campaign, cli, tmp_path
) -> None:
    store = tmp_path / "runs" / "store.sqlite"
    with_output = SMALL_CAMPAIGN.replace("[design]", f'output = "{store}"\n\n[design]')
    path = write_campaign(with_output)
    code, _, err = cli("report", str(path))
    assert code == 2 and len(err.strip().splitlines()) == 1
    assert str(path) in err and str(store) in err and f"mptcplab run {path}" in err
    code, _, err = cli("export", str(path), "--csv", str(tmp_path / "none.csv"))
    assert code == 2 and "stored no run yet" in err

    run_campaign(load(path), progress=False)
    html = tmp_path / "report.html"
    code, _, err = cli("report", str(path), "-o", str(html))
    assert code == 0, err
    assert "<html" in html.read_text(encoding="utf-8").lower()
    code, _, err = cli("report", str(path))
    assert code == 0, err
    assert (store.parent / "report.html").is_file()  # the default: beside the store
    csv_path = tmp_path / "runs.csv"
    code, _, err = cli("export", str(path), "--csv", str(csv_path))
    assert code == 0, err
    import pandas as pd

    assert len(pd.read_csv(csv_path)) == 12


def test_store_belongs_to_one_campaign(write_campaign) -> None:
    path = write_campaign()
    _run(path, jobs=1)
    other = write_campaign(SMALL_CAMPAIGN.replace('name = "small"', 'name = "other"'), "o.toml")
    with pytest.raises(UserError, match="belongs to campaign 'small'"):
        run_campaign(load(other), output=path.parent / "store.sqlite", progress=False)


def _test_provenance(store: Store) -> int:
    """A provenance record for a store written by hand."""
    return store.begin_provenance(
        mptcplab_version="test",
        git_revision=None,
        backend="sim",
        backend_version="test",
        host="host",
        executor="local",
        jobs=1,
        planned_runs=1,
        campaign_path="c.toml",
        campaign_text="",
    )


def test_a_write_cut_off_after_begin_does_not_block_the_clean_up(tmp_path) -> None:
    """Ctrl-C between a write's BEGIN and its error handler leaves a transaction open; the
    runner's clean-up (closing the provenance record) must still succeed."""
    with Store(tmp_path / "store.sqlite", create=True) as store:
        store.claim("small")
        provenance = _test_provenance(store)
        store._db.execute("BEGIN IMMEDIATE")  # the interrupted write, as the signal left it
        store.end_provenance(provenance)
        (entry,) = store.provenance()
        assert entry["ended_at"] is not None


def test_a_second_run_on_a_store_being_written_is_refused(write_campaign) -> None:
    """Two `mptcplab run` on one store each ran every task and counted it done; the second is
    now refused while the first holds the store, and runs once it is released."""
    path = write_campaign()
    store_path = path.parent / "store.sqlite"
    refused = pytest.raises(UserError, match="another `mptcplab run` is writing this store")
    with Store(store_path, create=True) as store, store.sole_writer(), refused:
        _run(path, jobs=1)
    summary = _run(path, jobs=1)
    assert (summary.planned, summary.completed) == (12, 12)


def test_a_run_already_done_is_not_counted_again(write_campaign) -> None:
    """The store keeps the first result of a run; recording it again changes nothing, and the
    provenance record does not count it as completed."""
    path = write_campaign()
    first = _run(path, jobs=1)
    db = sqlite3.connect(first.store)
    task = db.execute("SELECT * FROM runs LIMIT 1").fetchone()
    db.close()
    with Store(first.store, create=True) as store:
        provenance = _test_provenance(store)
        row = TaskRow(task[0], "main", 0, 0, {}, {}, 0, 0)
        outcome = RunOutcome(task[0], True, {"goodput_mbps": 1.0}, {}, None, 0.1)
        store.record(
            row,
            outcome,
            scenario={},
            backend="sim",
            backend_version="test",
            provenance_id=provenance,
        )
        entry = next(p for p in store.provenance() if p["id"] == provenance)
        assert entry["completed_runs"] == 0
    assert _runs(first.store)[0]["attempts"] == 1


def test_a_store_that_cannot_be_written_is_a_message_not_a_traceback(tmp_path) -> None:
    with Store(tmp_path / "store.sqlite", create=True) as store:
        store._db.close()
        # A write refused by SQLite: a read-only connection stands for a locked store or a
        # full disk.
        store._db = sqlite3.connect(f"{store.path.as_uri()}?mode=ro", uri=True)
        with pytest.raises(UserError, match=r"cannot write the store \(attempt to write"):
            store.claim("small")


def test_store_from_a_newer_format_is_refused(tmp_path) -> None:
    path = tmp_path / "store.sqlite"
    Store(path, create=True).close()
    db = sqlite3.connect(path)
    db.execute("UPDATE meta SET value = '999' WHERE key = 'format_version'")
    db.commit()
    db.close()
    with pytest.raises(UserError, match="newer mptcplab"):
        Store(path)


def test_ray_executor_without_ray_says_how_to_install_it(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "ray", None)  # `import ray` fails as if not installed
    with pytest.raises(UserError, match=r"pip install 'mptcplab\[ray\]'"):
        make_executor("ray", jobs=None, address="127.0.0.1:6379", serial=False)


def test_a_bad_executor_choice_is_refused_even_when_nothing_is_left_to_run(
    write_campaign, cli, tmp_path
) -> None:
    path = write_campaign()
    store = tmp_path / "done.sqlite"
    assert cli("run", str(path), "-o", str(store), "-q")[0] == 0
    code, _, err = cli("run", str(path), "-o", str(store), "--executor", "lcoal")
    assert code == 2 and "--executor: unknown executor 'lcoal'" in err
    code, _, err = cli("run", str(path), "-o", str(store), "--address", "10.0.0.1:6379")
    assert code == 2 and "--address is for --executor ray" in err
    code, out, err = cli("run", str(path), "-o", str(store))
    assert code == 0 and "0 completed now" in err + out


def test_unknown_backend_is_a_located_error(write_campaign) -> None:
    text = SMALL_CAMPAIGN.replace("metrics =", 'backend = "emu2"\nmetrics =')
    with pytest.raises(UserError, match="unknown backend 'emu2'") as caught:
        load(write_campaign(text))
    assert caught.value.field == "backend"


def test_register_adds_a_backend() -> None:
    backend = Backend("probe", "campaign_flaky_backend:run", "campaign_flaky_backend:version")
    try:
        register(backend)
        assert BACKENDS["probe"] is backend
        assert "mpsim" in backend.version_string()
    finally:
        BACKENDS.pop("probe", None)


EMU_CAMPAIGN = """\
name = "emu"
seed = 1
backend = "emu"
metrics = ["goodput_mbps"]

[design]
kind = "lhs"
points = 2
options = { optimize = false }

[scenario]
template = "two_path"
duration_s = 2.0
capacity_mbps = [4.0, 4.0]
cc = "reno"                     # the kernel has no coupled congestion control of its own
scheduler = "linger"            # upstream MPTCP's scheduler
penalization = "off"
opportunistic_retransmit = false

[factors.cap0]
low = 2.0
high = 8.0
param = "capacity_mbps[0]"
"""


@pytest.mark.root
def test_emulator_backend_runs_one_at_a_time(write_campaign) -> None:
    from mptcplab import emu

    ok, why = emu.available()
    if not ok:
        pytest.skip(f"the emulator cannot run here: {why}")
    summary = _run(write_campaign(EMU_CAMPAIGN))
    assert (summary.completed, summary.failed) == (2, 0)
    with Store(summary.store) as store:
        (entry,) = store.provenance()
        rows = store.task_rows()
    assert entry["jobs"] == 1 and entry["backend"] == "emu"
    assert entry["backend_version"].startswith("linux ")
    for row in rows:
        capacity = row["factors"]["cap0"] + 4.0
        assert 0 < row["metrics"]["goodput_mbps"] <= capacity * 1448 / 1500 * 1.01


def test_progress_and_summary_are_not_cut_in_a_log(write_campaign, run_cli, tmp_path) -> None:
    # Into a pipe (a CI log, `make run | tee`), rich would fit 80 columns and cut the figures.
    name = "conext13-lowbdp-lia-olia-balia-cubic"
    path = write_campaign(SMALL_CAMPAIGN.replace('name = "small"', f'name = "{name}"'))
    store = tmp_path / ("a-folder-with-a-long-name-" * 4) / "s.sqlite"
    out = run_cli("run", str(path), "-o", str(store), "-j", "1")
    assert out.returncode == 0, out.stderr
    assert "…" not in out.stderr, out.stderr
    progress = next(line for line in out.stderr.splitlines() if line.startswith(name))
    assert "12/12" in progress and "0 failed" in progress, progress
    # The summary names the store: longer than 120 columns, it stays one line all the same.
    summary = next(line for line in out.stderr.splitlines() if "runs planned" in line)
    assert len(summary) > 120 and summary.endswith(f"done in {store}"), out.stderr


def test_a_resumed_campaign_recomputes_metrics_another_definition_stored(
    write_campaign, tmp_path
) -> None:
    """Metrics are stored as computed when a run ran; a later mptcplab may define them
    otherwise without the runs' keys changing, and a resumed campaign set old values beside
    new ones. Stand-in for runs of another version: metrics overwritten and the store's
    fingerprint changed. The report says so; `run` recomputes them from the stored reports
    (the oracle: run_metrics of each stored report) before running anything."""
    path = write_campaign()
    first = _run(path, jobs=2)
    db = sqlite3.connect(first.store)
    db.execute("""UPDATE runs SET metrics = '{"goodput_mbps": 1000.0}'""")
    db.execute("UPDATE meta SET value = 'older' WHERE key = 'metrics_fingerprint'")
    db.commit()
    db.close()
    assert "computed by other metric code" in build_report(first.store)
    out = io.StringIO()
    second = run_campaign(
        load(path),
        output=first.store,
        progress=False,
        console=Console(file=out, width=200),
    )
    assert second.completed == 0
    assert "recomputed the metrics of 12 stored runs" in out.getvalue()
    for row in _runs(first.store):
        metrics = json.loads(row["metrics"])
        expected = run_metrics(decompress_json(row["report"]), decompress_json(row["scenario"]))
        assert metrics == pytest.approx(expected) and metrics["goodput_mbps"] < 1000
    assert "computed by other metric code" not in build_report(first.store)


def test_a_log_hears_of_the_progress_as_it_goes(
    write_campaign, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Rich draws the bar of a console that is no terminal (a log, a pipe) once, at the end; a
    plain line every LOG_EVERY_S says how far the campaign is meanwhile (every run, here)."""
    monkeypatch.setattr(runner_module, "LOG_EVERY_S", 0.0)
    path = write_campaign()
    out = io.StringIO()
    run_campaign(load(path), output=path.parent / "store.sqlite", console=Console(file=out))
    lines = [line for line in out.getvalue().splitlines() if line.startswith("small: ")]
    assert [line.split()[1] for line in lines] == [f"{k}/12" for k in range(1, 13)]

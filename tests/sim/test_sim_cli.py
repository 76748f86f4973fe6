"""``mptcplab sim``: bad input gives one located line per problem on stderr and exit code 2;
good input gives the report (JSON fields of report.rs, or tables)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from mptcplab import sim
from mptcplab.cli import main
from mptcplab.errors import UserError

ROOT = Path(__file__).resolve().parents[2]
DEFAULT = ROOT / "scenarios" / "default.toml"
needs_engine = pytest.mark.skipif(not sim.available(), reason="simulator extension not built")


def run_cli(argv: list[str], capsys: pytest.CaptureFixture[str], monkeypatch) -> tuple:
    monkeypatch.setattr(sys, "argv", ["mptcplab", *argv])
    code = 0
    try:
        main()
    except SystemExit as exc:
        code = exc.code if isinstance(exc.code, int) else 1
    out, err = capsys.readouterr()
    return code, out, err


def _bad_file(tmp_path: Path, old: str, new: str) -> tuple[Path, int]:
    text = DEFAULT.read_text()
    assert old in text
    bad = text.replace(old, new)
    path = tmp_path / "bad.toml"
    path.write_text(bad)
    line = next(i for i, t in enumerate(bad.splitlines(), 1) if new.split("\n")[0] in t)
    return path, line


@pytest.mark.parametrize(
    "old,new,field,expected",
    [
        (
            "capacity_mbps = 8.0",
            "capcity_mbps = 8.0",
            "links[0].capcity_mbps",
            "unknown field 'capcity_mbps' (did you mean 'capacity_mbps'?)",
        ),
        (
            'paths = [["wifi"]]',
            'paths = [["wlan"]]',
            "flows[0].paths[0][0]",
            "unknown link 'wlan'; links are: wifi",
        ),
        (
            "capacity_mbps = 8.0",
            "capacity_mbps = -8.0",
            "links[0].capacity_mbps",
            "expected a capacity in Mbit/s > 0, got -8",
        ),
        ("loss = 0.0", "loss = 1.5", "links[0].loss", "expected a probability in [0, 1), got 1.5"),
    ],
    ids=["unknown field", "missing link", "negative capacity", "loss above one"],
)
def test_bad_scenario_exits_2_with_one_line(
    tmp_path: Path, capsys, monkeypatch, old: str, new: str, field: str, expected: str
) -> None:
    path, line = _bad_file(tmp_path, old, new)
    code, out, err = run_cli(["sim", str(path)], capsys, monkeypatch)
    assert code == 2 and out == ""
    lines = err.strip().splitlines()
    assert len(lines) == 1
    assert lines[0].startswith(f"error: {path}:{line}: {field}: {expected}")


def test_every_problem_of_a_file_gets_its_own_located_line(
    tmp_path: Path, capsys, monkeypatch
) -> None:
    text = DEFAULT.read_text()
    bad = text.replace("capacity_mbps = 8.0", "capacity_mbps = -8.0").replace(
        'cc = "reno"', 'cc = "olai"'
    )
    assert bad.count("-8.0") == 1 and "olai" in bad
    path = tmp_path / "two.toml"
    path.write_text(bad)
    code, out, err = run_cli(["sim", str(path)], capsys, monkeypatch)
    assert code == 2 and out == ""
    lines = [line for line in err.splitlines() if line.strip()]
    cap_line = next(i for i, t in enumerate(bad.splitlines(), 1) if "-8.0" in t)
    cc_line = next(i for i, t in enumerate(bad.splitlines(), 1) if "olai" in t)
    assert lines == [
        f"error: {path}:{cap_line}: links[0].capacity_mbps: expected a capacity in Mbit/s > 0, "
        "got -8",
        f"error: {path}:{cc_line}: flows[0].cc: expected one of 'reno', 'cubic', 'lia', 'olia' "
        "or 'balia', got \"olai\"",
    ]


def test_many_problems_are_listed_up_to_a_count_of_the_rest(tmp_path: Path) -> None:
    links = "".join(
        f'[[links]]\nid = "l{i}"\ncapacity_mbps = -1\ndelay_ms = 5\n' for i in range(13)
    )
    path = tmp_path / "many.toml"
    path.write_text(
        f'duration_s = 5\n{links}[[flows]]\nid = "f"\nprotocol = "tcp"\npaths = [["l0"]]\n'
    )
    with pytest.raises(UserError) as caught:
        sim.run(str(path))
    problems = caught.value.problems()
    assert len(problems) == 10
    assert [p.split(": ")[1] for p in problems] == [f"links[{i}].capacity_mbps" for i in range(10)]
    assert problems[-1].endswith("got -1 (and 3 more problems)")


def test_bad_options_exit_2(tmp_path: Path, capsys, monkeypatch) -> None:
    code, _, err = run_cli(["sim", str(DEFAULT), "--trace", "cwnd,speed"], capsys, monkeypatch)
    assert code == 2 and "--trace" in err and "speed" in err and len(err.strip().splitlines()) == 1
    code, _, err = run_cli(["sim", str(tmp_path / "none.toml")], capsys, monkeypatch)
    assert code == 2 and "no such file" in err and len(err.strip().splitlines()) == 1
    code, _, err = run_cli(["sim", str(DEFAULT), "--duration", "-1"], capsys, monkeypatch)
    assert code == 2 and "--duration: expected a duration in seconds > 0, got -1" in err
    assert len(err.strip().splitlines()) == 1
    # Beyond the simulator's clock (nanoseconds in 64 bits) a run would end at its limit.
    code, _, err = run_cli(["sim", str(DEFAULT), "--duration", "1e12"], capsys, monkeypatch)
    # The limit is written as the scenario file's own check writes it.
    assert code == 2 and (
        "--duration: expected a duration of at most 10000000000 s (the clock counts nanoseconds "
        "in 64 bits), got 1000000000000" in err
    )
    code, _, err = run_cli(["sim", str(DEFAULT), "--duration", "1e300"], capsys, monkeypatch)
    assert code == 2 and err.rstrip().endswith("got 1e300"), err
    # Below a millisecond the report's rates would divide by a period that rounds to nothing.
    code, _, err = run_cli(["sim", str(DEFAULT), "--duration", "1e-10"], capsys, monkeypatch)
    assert code == 2 and "--duration: expected a duration of at least 0.001 s, got 1e-10" in err


@needs_engine
def test_output_goes_into_a_folder_made_for_it(tmp_path: Path, capsys, monkeypatch) -> None:
    target = tmp_path / "not-yet" / "report.json"
    argv = ["sim", str(DEFAULT), "--duration", "1", "-o", str(target)]
    code, _, err = run_cli(argv, capsys, monkeypatch)
    assert code == 0, err
    assert json.loads(target.read_text())["scenario"]["duration_s"] == 1.0


def test_a_duration_inside_the_warm_up_names_the_warm_up(capsys, monkeypatch) -> None:
    wifi_3g = ROOT / "scenarios" / "two_path_wifi_3g.toml"  # warmup_s = 2
    code, _, err = run_cli(["sim", str(wifi_3g), "--duration", "1.5"], capsys, monkeypatch)
    assert code == 2 and len(err.strip().splitlines()) == 1
    assert "error: --duration: expected a duration longer than the scenario's warm-up" in err
    assert "warmup_s = 2 s; got 1.5" in err


def test_a_problem_an_option_makes_names_the_option_or_the_file_and_line(
    tmp_path: Path, capsys, monkeypatch
) -> None:
    """--duration, --seed and --trace replace the file's values; a problem they make named
    neither the option nor the file's line."""
    late = tmp_path / "late.toml"
    late.write_text(
        DEFAULT.read_text().replace(
            'app = { kind = "bulk" }', 'app = { kind = "bulk" }\nstart_s = 10.0'
        )
    )
    line = late.read_text().splitlines().index("start_s = 10.0") + 1
    code, _, err = run_cli(["sim", str(late), "--duration", "5"], capsys, monkeypatch)
    assert code == 2 and err.strip() == (
        f"error: {late}:{line}: flows[0].start_s: expected a start before duration_s = 5 s, "
        "got 10 (with --duration 5)"
    )
    code, _, err = run_cli(
        ["sim", str(DEFAULT), "--seed", "18446744073709551616"], capsys, monkeypatch
    )
    assert code == 2 and err.startswith("error: --seed: expected a value ≤ 18446744073709551615")
    fine = tmp_path / "fine.toml"
    fine.write_text("trace_interval_ms = 0.0001\n" + DEFAULT.read_text())
    code, _, err = run_cli(["sim", str(fine), "--trace", "cwnd,srtt"], capsys, monkeypatch)
    assert code == 2 and err.startswith(f"error: {fine}:1: trace_interval_ms: expected at least")
    assert err.strip().endswith("(with --trace cwnd,srtt)")


@needs_engine
def test_the_tables_say_what_the_traces_hold_and_where(capsys, monkeypatch) -> None:
    argv = ["sim", str(DEFAULT), "--duration", "2", "--trace", "cwnd,ssthresh,srtt,rwnd,queue"]
    code, out, err = run_cli(argv, capsys, monkeypatch)
    assert code == 0, err
    samples = int(2 / 0.1) + 1  # every trace_interval_ms (100) from 0 to the end
    note = next(line for line in out.splitlines() if line.startswith("traces"))
    assert "--json or -o FILE" in note
    for kind in ("cwnd", "ssthresh", "srtt", "rwnd", "queue"):
        assert f"{kind} 1 × {samples} samples" in note, note
    code, out, _ = run_cli(["sim", str(DEFAULT), "--duration", "2"], capsys, monkeypatch)
    assert code == 0 and "traces" not in out


def test_a_non_positive_duration_from_the_api_is_refused_as_such() -> None:
    # The warm-up message is for a positive duration inside the warm-up only.
    with pytest.raises(UserError, match=r"duration_s: expected a duration in seconds > 0, got -1"):
        sim.run(DEFAULT, duration_s=-1)


def test_installed_command_exit_code(tmp_path: Path) -> None:
    path, line = _bad_file(tmp_path, "loss = 0.0", "loss = 1.0")
    exe = Path(sys.executable).with_name("mptcplab")
    cmd = [str(exe)] if exe.exists() else [sys.executable, "-m", "mptcplab.cli"]
    env = dict(os.environ, PYTHONPATH=str(ROOT / "python"), COLUMNS="100")
    proc = subprocess.run([*cmd, "sim", str(path)], capture_output=True, text=True, env=env)
    assert proc.returncode == 2
    assert proc.stderr.strip() == (
        f"error: {path}:{line}: links[0].loss: expected a probability in [0, 1), got 1"
    )
    assert "Traceback" not in proc.stderr


def _interruptible_by_ctrl_c() -> None:
    """In the child: SIGINT as a terminal leaves it. A test run started in the background of a
    non-interactive shell inherits SIGINT ignored, and the command then rightly ignores it."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


@needs_engine
def test_ctrl_c_stops_a_long_run_at_once(tmp_path: Path) -> None:
    # A million simulated seconds (hours of work): Ctrl-C must not wait for the run to end.
    exe = Path(sys.executable).with_name("mptcplab")
    cmd = [str(exe)] if exe.exists() else [sys.executable, "-m", "mptcplab.cli"]
    env = dict(os.environ, PYTHONPATH=str(ROOT / "python"))
    proc = subprocess.Popen(
        [*cmd, "sim", str(DEFAULT), "--duration", "1e6"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
        preexec_fn=_interruptible_by_ctrl_c,
    )
    try:
        # Wait for the run to start (the interpreter and the extension loaded), then interrupt.
        with pytest.raises(subprocess.TimeoutExpired):
            proc.wait(timeout=3)
        proc.send_signal(signal.SIGINT)
        _, err = proc.communicate(timeout=30)
    finally:
        proc.kill()
    assert proc.returncode == 130, err
    assert err.strip() == "interrupted"


@needs_engine
@pytest.mark.parametrize("after_s", [0.1, 0.3, 0.6])
def test_ctrl_c_while_the_command_starts_leaves_no_traceback(after_s: float) -> None:
    # Interrupted while the interpreter imports the library (before any command runs).
    exe = Path(sys.executable).with_name("mptcplab")
    if not exe.exists():
        pytest.skip("the mptcplab console script is not installed (make build)")
    proc = subprocess.Popen(
        [str(exe), "sim", str(DEFAULT), "--duration", "1e6"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        preexec_fn=_interruptible_by_ctrl_c,
    )
    try:
        time.sleep(after_s)
        proc.send_signal(signal.SIGINT)
        _, err = proc.communicate(timeout=30)
    finally:
        proc.kill()
    assert "Traceback" not in err, err
    # Before the interpreter installs its handler the signal ends the process by itself.
    assert proc.returncode in (130, -signal.SIGINT), (proc.returncode, err)
    if proc.returncode == 130:
        assert err.strip() == "interrupted"


def test_an_output_that_cannot_be_written_is_refused_before_the_run(
    tmp_path: Path, capsys, monkeypatch
) -> None:
    (tmp_path / "regular").write_text("")
    target = tmp_path / "regular" / "report.json"
    code, out, err = run_cli(["sim", str(DEFAULT), "-o", str(target)], capsys, monkeypatch)
    assert code == 2 and out == ""  # no tables: the run did not start
    assert f"{target}: cannot write the report: {tmp_path / 'regular'} is a file" in err


@needs_engine
def test_json_report_has_the_documented_fields(capsys, monkeypatch, tmp_path: Path) -> None:
    out_file = tmp_path / "r.json"
    code, out, err = run_cli(
        ["sim", str(DEFAULT), "--json", "--duration", "5", "-o", str(out_file)],
        capsys,
        monkeypatch,
    )
    assert code == 0, err
    report = json.loads(out)
    assert report == json.loads(out_file.read_text())
    assert report["format_version"] == 1
    assert isinstance(report["events"], int) and report["events"] > 0
    assert report["wall_s"] >= 0
    assert report["scenario"]["duration_s"] == 5
    (flow,) = report["flows"]
    assert flow["id"] == "laptop"
    for key in ("goodput_mbps", "bytes_delivered"):
        assert key in flow
    (sub,) = flow["subflows"]
    for key in ("goodput_mbps", "retransmits"):
        assert key in sub
    (link,) = report["links"]
    assert link["id"] == "wifi"
    for key in ("utilization", "drops", "loss_rate"):
        assert key in link
    # An 8 Mbit/s link: goodput is positive and below the link rate (an independent bound).
    assert 0 < flow["goodput_mbps"] <= 8.0
    assert 0 <= link["utilization"] <= 1 and 0 <= link["loss_rate"] < 1


@needs_engine
def test_tables(capsys, monkeypatch) -> None:
    code, out, err = run_cli(
        ["sim", str(DEFAULT), "--duration", "3", "--seed", "3"], capsys, monkeypatch
    )
    assert code == 0, err
    for text in ("flows", "links", "laptop", "0: wifi", "events/s", "seed 3", "goodput"):
        assert text in out
    # The flow's row: goodput, then its fair share, alone on the 8 Mbit/s link: all of its
    # payload rate.
    (row,) = [line.split() for line in out.splitlines() if line.split()[:1] == ["laptop"]]
    assert float(row[4]) == pytest.approx(8.0 * 1448 / 1500, abs=1e-3)


@needs_engine
def test_count_gives_numbered_flows(tmp_path: Path, capsys, monkeypatch) -> None:
    path = tmp_path / "count.toml"
    path.write_text(
        DEFAULT.read_text().replace('id = "laptop"', 'id = "x"').replace("count = 1 ", "count = 3 ")
    )
    code, out, err = run_cli(["sim", str(path), "--json", "--duration", "2"], capsys, monkeypatch)
    assert code == 0, err
    assert [f["id"] for f in json.loads(out)["flows"]] == ["x#0", "x#1", "x#2"]


@needs_engine
def test_a_population_gets_a_summary_row(tmp_path: Path, capsys, monkeypatch) -> None:
    path = tmp_path / "count.toml"
    path.write_text(
        DEFAULT.read_text().replace('id = "laptop"', 'id = "x"').replace("count = 1 ", "count = 4 ")
    )
    code, out, err = run_cli(["sim", str(path), "--duration", "20"], capsys, monkeypatch)
    assert code == 0, err
    (row,) = [line.split() for line in out.splitlines() if line.split()[:2] == ["x", "4"]]
    total, mean, low, high, jain, fair = map(float, row[2:])
    report = sim.run(path, duration_s=20)
    goodputs = [f.goodput_mbps for f in report.group("x")]
    assert total == pytest.approx(sum(goodputs), abs=1e-3)
    assert total <= 8.0  # four Reno flows share one 8 Mbit/s link
    assert (low, high) == (
        pytest.approx(min(goodputs), abs=1e-3),
        pytest.approx(max(goodputs), abs=1e-3),
    )
    assert mean == pytest.approx(total / 4, abs=1e-3)
    # Jain's index (Σx)² / (n Σx²), computed here from the flows' rows.
    assert jain == pytest.approx(sum(goodputs) ** 2 / (4 * sum(g * g for g in goodputs)), abs=1e-3)
    # Each of the four gets a quarter of the link's payload rate max-min fairly.
    assert fair == pytest.approx(8.0 * 1448 / 1500 / 4, abs=1e-3)

    # Without a population there is no such table.
    code, out, _ = run_cli(["sim", str(DEFAULT), "--duration", "2"], capsys, monkeypatch)
    assert code == 0 and "flow groups" not in out


@needs_engine
def test_no_fair_share_column_when_a_flow_starts_inside_the_measurement(
    tmp_path: Path, capsys, monkeypatch
) -> None:
    # Max-min fair shares take every flow as active through the measurement window; a flow
    # that starts 5 s into a window that begins at 0 is not, so the column would mislead.
    path = tmp_path / "late.toml"
    path.write_text(DEFAULT.read_text().replace("count = 1 ", "start_s = 5.0\ncount = 1 "))
    code, out, err = run_cli(["sim", str(path), "--duration", "8"], capsys, monkeypatch)
    assert code == 0, err
    assert "goodput" in out and "fair" not in out


@needs_engine
def test_the_fastest_and_slowest_links_get_their_fair_shares(
    tmp_path: Path, capsys, monkeypatch
) -> None:
    # Capacities 11 orders of magnitude apart, shared by a population and a single flow: the
    # fair shares' linear program once failed on such numbers and the table ended in a
    # traceback.
    path = tmp_path / "extremes.toml"
    path.write_text(
        "duration_s = 0.01\n"
        '[[links]]\nid = "fast"\ncapacity_mbps = 2e5\ndelay_ms = 0\n'
        '[[links]]\nid = "slow"\ncapacity_mbps = 1e-6\ndelay_ms = 1\n'
        '[[flows]]\nid = "f"\nprotocol = "mptcp"\npaths = [["fast"], ["slow"]]\ncount = 3\n'
        '[[flows]]\nid = "g"\nprotocol = "tcp"\npaths = [["slow"]]\n'
    )
    code, out, err = run_cli(["sim", str(path)], capsys, monkeypatch)
    assert code == 0, err
    rows = {r[0]: r for r in (line.split() for line in out.splitlines()) if r[:1]}
    payload_mbps = 2e5 * 1448 / 1500
    # Each user's fair share is a third of the fast link's payload rate, the TCP flow's the
    # slow link's; together the users carry no more than the fast link can.
    for user in ("f#0", "f#1", "f#2"):
        assert float(rows[user][4].replace(",", "")) == pytest.approx(payload_mbps / 3, rel=1e-6)
    assert float(rows["g"][4].replace(",", "")) == pytest.approx(0.0, abs=1e-3)
    carried = sum(float(rows[u][3].replace(",", "")) for u in ("f#0", "f#1", "f#2"))
    assert carried <= payload_mbps * 1.01

"""``mptcplab sim`` as the user reads it: tables that keep every figure whole on a narrow
terminal, a population of flows summed up past its first rows, errors that name what the user
typed, and a traces note that says why a trace is empty."""

from __future__ import annotations

import io
import re
import statistics
from pathlib import Path

import pytest
from rich.console import Console

from mptcplab import sim
from mptcplab.commands.sim import FLOWS_SHOWN_PER_ENTRY, print_report
from mptcplab.results import Report
from mptcplab.scenario.field_paths import ScenarioFile

ROOT = Path(__file__).resolve().parents[2]
DEFAULT = ROOT / "scenarios" / "default.toml"
WIFI_3G = ROOT / "scenarios" / "two_path_wifi_3g.toml"
LOSSY = ROOT / "scenarios" / "lossy_paths.toml"
pytestmark = pytest.mark.skipif(not sim.available(), reason="simulator extension not built")


def printed(report: Report, width: int) -> str:
    out = io.StringIO()
    print_report(report, Console(file=out, width=width, color_system=None))
    return out.getvalue()


@pytest.mark.parametrize("width", [80, 60, 30])
def test_a_narrow_console_cuts_no_figure(width: int) -> None:
    report = sim.run(WIFI_3G)
    text = printed(report, width)
    assert "…" not in text
    for flow in report.flows:
        assert f"{flow.goodput_mbps:,.3f}" in text
        for sub in flow.subflows:
            assert f"{sub.goodput_mbps:,.3f}" in text
            assert f"{sub.max_cwnd_bytes / 1e3:,.1f}" in text
    if width == 80:  # it fits once the text columns wrap
        assert max(len(line.rstrip()) for line in text.splitlines()) <= width


def test_flows_past_the_first_of_an_entry_are_summed_up_from_the_report() -> None:
    count = FLOWS_SHOWN_PER_ENTRY + 15
    scenario = ScenarioFile(DEFAULT).with_fields({"flows[0].count": count, "duration_s": 3.0})
    report = sim.run(scenario)
    text = printed(report, 200)
    rows = re.findall(r"^ (laptop#\d+) ", text, flags=re.MULTILINE)
    assert rows == [f"laptop#{k}" for k in range(FLOWS_SHOWN_PER_ENTRY)]
    rest = [f.goodput_mbps for f in report.group("laptop")[FLOWS_SHOWN_PER_ENTRY:]]
    spread = " / ".join(f"{v:,.3f}" for v in (min(rest), statistics.median(rest), max(rest)))
    words = " ".join(text.split())  # the line wraps to the table's width
    assert words.count("more flows") == 1
    assert (
        f"laptop: 15 more flows (laptop#{FLOWS_SHOWN_PER_ENTRY} … laptop#{count - 1}), goodput "
        f"min / median / max {spread} Mbit/s; --json has every flow"
    ) in words
    assert len(report.flows) == count  # the report itself keeps every flow


def test_the_json_report_keeps_every_flow(cli) -> None:
    count = FLOWS_SHOWN_PER_ENTRY + 5
    code, out, err = cli(
        "sim", str(DEFAULT), "--json", "--duration", "2", "--set", f"flows[0].count={count}"
    )
    assert code == 0, err
    assert len(Report.from_json(out).flows) == count


def test_a_duration_under_the_warm_up_is_blamed_on_the_option(cli) -> None:
    code, out, err = cli("sim", str(LOSSY), "--duration", "5")
    assert (code, out) == (2, "")
    assert err.strip() == (
        "error: --duration: expected a duration longer than the scenario's warm-up, "
        "warmup_s = 5 s; got 5"
    )


@pytest.mark.parametrize("value", ["-1", "0"])
def test_a_count_below_one_is_refused_as_such(value: str, cli) -> None:
    argv = ["sim", str(DEFAULT), "--set", f"flows[0].count={value}"]
    code, out, err = cli(*argv)
    assert (code, out) == (2, "")
    assert err.startswith(f"error: --set flows[0].count={value}: expected a count ≥ 1")


def test_a_count_below_one_in_a_json_file(tmp_path: Path, cli) -> None:
    path = tmp_path / "negative.json"
    path.write_text(
        '{"duration_s": 2, "links": [{"id": "l", "capacity_mbps": 1, "delay_ms": 1}],\n'
        ' "flows": [{"id": "f", "protocol": "tcp", "paths": [["l"]],\n'
        '            "count": -1}]}\n'
    )
    code, out, err = cli("sim", str(path))
    assert (code, out) == (2, "")
    assert err.strip() == f"error: {path}:3: flows[0].count: expected a count ≥ 1, got -1"


def test_a_blocks_trace_without_a_blocks_flow_says_so(cli) -> None:
    argv = ["sim", str(DEFAULT), "--duration", "1", "--trace", "blocks"]
    code, out, err = cli(*argv)
    assert code == 0, err
    note = out.strip().splitlines()[-1]
    assert "no flow has a blocks application" in note
    assert "no sample fell" not in note


def test_tables_do_not_serialize_the_report(cli, monkeypatch) -> None:
    """A long trace took longer to write as JSON than to simulate, and nobody read it."""

    def refuse(self: Report, **_: object) -> str:
        raise AssertionError("the report was serialized for a table")

    monkeypatch.setattr(Report, "to_json", refuse)
    argv = ["sim", str(DEFAULT), "--duration", "1", "--trace", "cwnd"]
    code, out, err = cli(*argv)
    assert code == 0, err
    assert "cwnd 1 ×" in out

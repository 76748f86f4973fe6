"""The report model mirrors crates/mpsim/src/report.rs, keeps fields added by other backends,
and refuses reports newer than it understands."""

from __future__ import annotations

import copy
import re
from pathlib import Path
from typing import Any

import pytest

from mptcplab.errors import UserError
from mptcplab.results import (
    FORMAT_VERSION,
    FlowReport,
    LatencySummary,
    LinkReport,
    Report,
    SubflowReport,
    Traces,
)

RUST = Path(__file__).resolve().parents[2] / "crates" / "mpsim" / "src" / "report.rs"


def _rust_struct_fields(name: str) -> set[str]:
    text = RUST.read_text(encoding="utf-8")
    start = text.index("{", text.index(f"pub struct {name} "))
    body = text[start + 1 : text.index("\n}", start)]
    return set(re.findall(r"^\s*pub (\w+):", body, flags=re.M))


@pytest.mark.parametrize(
    "name,model",
    [
        ("Report", Report),
        ("FlowReport", FlowReport),
        ("SubflowReport", SubflowReport),
        ("LatencySummary", LatencySummary),
        ("LinkReport", LinkReport),
        ("Traces", Traces),
    ],
)
def test_fields_mirror_report_rs(name: str, model: type) -> None:
    python = set(model.model_fields) - {"wall_s"}
    assert python == _rust_struct_fields(name)


def test_format_version_matches_the_simulator() -> None:
    text = RUST.read_text(encoding="utf-8")
    assert f"pub const FORMAT_VERSION: u32 = {FORMAT_VERSION};" in text


def _subflow(index: int, path: list[str]) -> dict[str, Any]:
    return {
        "index": index,
        "path": path,
        "goodput_mbps": 1.5,
        "bytes_delivered": 1000,
        "packets_sent": 10,
        "retransmits": 1,
        "fast_retransmits": 1,
        "timeouts": 0,
        "mean_srtt_ms": 20.0,
        "max_cwnd_bytes": 14480.0,
        "time_to_max_cwnd_s": 0.5,
    }


def _flow(flow_id: str) -> dict[str, Any]:
    return {
        "id": flow_id,
        "protocol": "mptcp",
        "cc": "lia",
        "goodput_mbps": 3.0,
        "bytes_delivered": 2000,
        "retransmits": 2,
        "reinjections": 0,
        "penalizations": 0,
        "rwnd_limited_s": 0.0,
        "peak_rcvbuf_bytes": 5000,
        "final_rcvbuf_bytes": 8000,
        "completion_s": None,
        "block_latency": None,
        "subflows": [_subflow(0, ["a"]), _subflow(1, ["b"])],
    }


REPORT: dict[str, Any] = {
    "format_version": 1,
    "mpsim_version": "0.1.0",
    "scenario": {
        "duration_s": 10.0,
        "links": [
            {"id": "a", "capacity_mbps": 1.0, "delay_ms": 1.0},
            {"id": "b", "capacity_mbps": 1.0, "delay_ms": 1.0},
        ],
        "flows": [{"id": "x", "protocol": "mptcp", "paths": [["a"], ["b"]], "count": 2}],
    },
    "seed": 1,
    "measured_s": 10.0,
    "events": 1234,
    "packets_delivered": 99,
    "data_packets_delivered": 60,
    "flows": [_flow("x#0"), _flow("x#1")],
    "links": [
        {
            "id": link_id,
            "utilization": 0.5,
            "packets": 100,
            "bytes": 150000,
            "drops": 2,
            "queue_drops": 2,
            "red_drops": 0,
            "random_drops": 0,
            "loss_rate": 0.02,
            "mean_queue_packets": 1.5,
            "max_queue_packets": 7,
        }
        for link_id in ("a", "b")
    ],
    "wall_s": 0.25,
}


def test_lookups() -> None:
    r = Report.from_dict(copy.deepcopy(REPORT))
    assert r.flow("x#1").id == "x#1"
    assert [f.id for f in r.group("x")] == ["x#0", "x#1"]
    assert r.link("b").drops == 2
    with pytest.raises(KeyError, match="flows are: x#0, x#1"):
        r.flow("x")
    with pytest.raises(KeyError):
        r.link("c")


def test_round_trip_and_extra_blocks() -> None:
    data = copy.deepcopy(REPORT)
    data["fidelity"] = {"kernel": "6.8", "drops_unexplained": 0}
    data["backend"] = {"name": "emu"}
    data["flows"][0]["subflows"][0]["mptcp_info"] = {"ssthresh": 7}
    r = Report.from_dict(data)
    out = r.to_dict()
    assert out["fidelity"] == data["fidelity"] and out["backend"] == data["backend"]
    assert out["flows"][0]["subflows"][0]["mptcp_info"] == {"ssthresh": 7}
    assert "traces" not in out
    assert Report.from_json(r.to_json()) == r


def test_newer_format_is_refused() -> None:
    data = copy.deepcopy(REPORT)
    data["format_version"] = FORMAT_VERSION + 1
    with pytest.raises(UserError, match="newer"):
        Report.from_dict(data)


def test_not_a_report() -> None:
    with pytest.raises(UserError, match="not a report"):
        Report.from_dict({"format_version": 1})
    with pytest.raises(UserError, match="not a report"):
        Report.from_json("{")

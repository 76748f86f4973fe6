"""``mptcplab.sim``: inputs it accepts, overrides, determinism, and how simulator rejections
become located user errors."""

from __future__ import annotations

import json
import threading
from pathlib import Path
from types import SimpleNamespace

import pytest

from mptcplab import sim
from mptcplab.errors import UserError
from mptcplab.scenario import load_scenario, templates

ROOT = Path(__file__).resolve().parents[2]
DEFAULT = ROOT / "scenarios" / "default.toml"
needs_engine = pytest.mark.skipif(not sim.available(), reason="simulator extension not built")


class _Rejection(Exception):
    def __init__(self, field: str, detail: str) -> None:
        super().__init__(f"{field}: {detail}")
        self.field = field
        self.detail = detail


def _rejecting(field: str, detail: str) -> SimpleNamespace:
    """A native module that rejects every scenario, as the simulator does for a rule the Python
    model would not know about."""

    def reject(*_: object) -> str:
        raise _Rejection(field, detail)

    return SimpleNamespace(
        run=reject, validate=reject, ScenarioError=_Rejection, __version__="test"
    )


def test_simulator_rejection_becomes_a_located_user_error(monkeypatch) -> None:
    monkeypatch.setattr(sim, "_native", lambda: _rejecting("links[0].delay_ms", "too long"))
    with pytest.raises(UserError) as info:
        sim.run(DEFAULT)
    err = info.value
    line = next(i for i, t in enumerate(DEFAULT.read_text().splitlines(), 1) if "delay_ms" in t)
    assert (err.file, err.line, err.field, err.detail) == (
        str(DEFAULT),
        line,
        "links[0].delay_ms",
        "too long",
    )
    with pytest.raises(UserError) as info:
        sim.run(templates.two_path())
    assert info.value.field == "links[0].delay_ms" and info.value.line is None


def test_validate_uses_both_checks(monkeypatch) -> None:
    monkeypatch.setattr(sim, "_native", lambda: _rejecting("flows[0].count", "too many"))
    with pytest.raises(UserError) as info:
        sim.validate(DEFAULT)
    line = next(i for i, t in enumerate(DEFAULT.read_text().splitlines(), 1) if "count" in t)
    assert (info.value.field, info.value.line) == ("flows[0].count", line)


def test_serde_positions_are_dropped(monkeypatch) -> None:
    # They point into the JSON generated for the simulator, not into the user's file.
    monkeypatch.setattr(
        sim,
        "_native",
        lambda: _rejecting(
            "", "invalid type: floating point `1.5`, expected u64 at line 1 column 87"
        ),
    )
    with pytest.raises(UserError) as info:
        sim.run(DEFAULT)
    assert info.value.detail == "invalid type: floating point `1.5`, expected u64"
    assert info.value.field is None and info.value.line is None


def test_run_json_rejects_bad_text_before_the_simulator(monkeypatch) -> None:
    monkeypatch.setattr(sim, "_native", lambda: pytest.fail("simulator called"))
    with pytest.raises(UserError) as info:
        sim.run_json('{\n"duration_s": 0,\n"links": [], "flows": []}')
    assert info.value.field == "duration_s" and info.value.line == 2
    with pytest.raises(UserError):
        sim.run_json("not json")
    with pytest.raises(TypeError):
        sim.run(42)  # type: ignore[arg-type]


def test_missing_extension_is_reported(monkeypatch) -> None:
    def missing() -> None:
        raise sim.SimulatorUnavailable("not built")

    monkeypatch.setattr(sim, "_native", missing)
    assert not sim.available()
    with pytest.raises(sim.SimulatorUnavailable):
        sim.run(DEFAULT)


@needs_engine
def test_inputs_give_the_same_report() -> None:
    scenario = load_scenario(DEFAULT).model_copy(update={"duration_s": 3.0})
    a = sim.run(scenario)
    b = sim.run(scenario.to_dict())
    c = sim.run_json(scenario.to_json())
    for r in (a, b):
        r.wall_s = None
    c.pop("wall_s")
    assert a == b
    assert a.to_dict() == json.loads(json.dumps(c))
    assert a.scenario == scenario


@needs_engine
def test_progress_ends_at_the_end_and_changes_nothing() -> None:
    calls: list[tuple[float, float, int]] = []
    watched = sim.run(DEFAULT, duration_s=3, progress=lambda *a: calls.append(a)).to_dict()
    plain = sim.run(DEFAULT, duration_s=3).to_dict()
    for r in (watched, plain):
        r.pop("wall_s")
    assert json.dumps(watched) == json.dumps(plain)
    assert calls[-1] == (3.0, 3.0, plain["events"])


def test_a_progress_that_cannot_be_called_is_refused_before_the_run() -> None:
    with pytest.raises(TypeError, match="progress: expected a callable, got str"):
        sim.run(DEFAULT, duration_s=1e6, progress="every second")  # type: ignore[arg-type]


class _Enough(Exception):
    pass


@needs_engine
def test_progress_moves_forward_and_its_exception_stops_the_run() -> None:
    # A million simulated seconds would take hours; the callback's exception must end it.
    calls: list[tuple[float, float, int]] = []
    outcome: list[BaseException] = []

    def progress(simulated_s: float, duration_s: float, events: int) -> None:
        calls.append((simulated_s, duration_s, events))
        if len(calls) == 3:
            raise _Enough

    def target() -> None:
        try:
            sim.run(DEFAULT, duration_s=1e6, progress=progress)
        except BaseException as exc:
            outcome.append(exc)

    worker = threading.Thread(target=target, daemon=True)
    worker.start()
    worker.join(timeout=120)
    assert not worker.is_alive(), "the run went on after its progress callback raised"
    assert len(outcome) == 1 and isinstance(outcome[0], _Enough)
    simulated, durations, events = zip(*calls, strict=True)
    assert 0 < simulated[0] < simulated[1] < simulated[2] < 1e6
    assert set(durations) == {1e6}
    assert 0 < events[0] < events[1] < events[2]


@needs_engine
def test_same_seed_same_report_bit_for_bit() -> None:
    first = sim.run(DEFAULT, duration_s=3, seed=11).to_dict()
    second = sim.run(DEFAULT, duration_s=3, seed=11).to_dict()
    for r in (first, second):
        r.pop("wall_s")
    assert json.dumps(first) == json.dumps(second)
    assert first["seed"] == 11 and first["scenario"]["duration_s"] == 3


@needs_engine
def test_overrides_and_traces() -> None:
    r = sim.run(DEFAULT, duration_s=2, trace=["cwnd", "queue"])
    assert r.scenario.trace == ["cwnd", "queue"]
    assert r.traces is not None and r.traces.cwnd and r.traces.queue
    assert r.measured_s == pytest.approx(2.0)
    with pytest.raises(UserError) as info:
        sim.run(DEFAULT, trace=["throughput"])
    assert info.value.field == "trace[0]"


@needs_engine
def test_overrides_of_a_scenario_built_in_python() -> None:
    # A queue or an application left at its default kind was dropped from the dump the
    # overrides are validated from, and read back as a table of no kind.
    built = templates.two_path(duration_s=2)
    given = sim.run(built, seed=5).to_dict()
    written = sim.run({**built.to_dict(), "seed": 5}).to_dict()
    for report in (given, written):
        report.pop("wall_s")
    assert given == written


def test_a_model_changed_in_place_keeps_its_changes_under_overrides() -> None:
    """A default list or table changed in place is not marked as set: the overrides rebuilt
    the model without it, and traced nothing, or ran another initial window."""
    built = templates.two_path(duration_s=2)
    built.trace.append("cwnd")
    built.flows[0].tcp.initial_window = 2
    given = sim.run(built, seed=5).to_dict()
    written = sim.run({**built.to_dict(), "seed": 5}).to_dict()
    for report in (given, written):
        report.pop("wall_s")
    assert given["traces"] is not None
    assert given["scenario"]["flows"][0]["tcp"]["initial_window"] == 2
    assert given == written


@pytest.mark.parametrize(
    ("path", "value", "field"),
    [
        (("duration_s",), "abc", "duration_s"),
        (("seed",), 2**64, "seed"),
        (("links", 0, "id"), 5, "links[0].id"),
        (("flows", 0, "count"), -1, "flows[0].count"),
    ],
)
def test_a_model_assigned_a_wrong_value_is_refused_naming_the_field(path, value, field) -> None:
    """A model is not validated again on assignment; the simulator's reader, given a value of
    the wrong type, names no field."""
    for check in (sim.run, sim.validate):
        built = templates.two_path(duration_s=2)
        target = built
        for step in path[:-1]:
            target = target[step] if isinstance(step, int) else getattr(target, step)
        setattr(target, path[-1], value)
        with pytest.raises(UserError) as info:
            check(built)
        assert info.value.field == field, info.value


@pytest.mark.parametrize(
    ("override", "field", "detail"),
    [
        ({"duration_s": "2"}, "duration_s", "expected a number"),
        ({"trace": "cwnd"}, "trace", "expected a list of trace kinds such as ['cwnd']"),
    ],
)
def test_overrides_of_the_wrong_type_are_named(override, field, detail) -> None:
    with pytest.raises(UserError) as info:
        sim.run(templates.two_path(duration_s=2), **override)
    assert info.value.field == field and detail in info.value.detail


@needs_engine
def test_validate_with_the_simulator() -> None:
    assert sim.validate(DEFAULT) == load_scenario(DEFAULT)
    assert sim.validate(templates.wifi_3g().to_dict()) == templates.wifi_3g()


@needs_engine
def test_version() -> None:
    assert sim.version() == sim.run(DEFAULT, duration_s=1).mpsim_version

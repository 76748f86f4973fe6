"""Loading scenario files: one message naming the file, the line, the field and what was
expected, for TOML and JSON, never a traceback."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from mptcplab.errors import UserError
from mptcplab.scenario import load_scenario

ROOT = Path(__file__).resolve().parents[2]

GOOD_TOML = """\
duration_s = 30.0
seed = 7
[[links]]
id = "wifi"
capacity_mbps = 8.0
delay_ms = 10.0
queue = { kind = "droptail", ms = 80 }
loss = 0.0
[[links]]
id = "3g"
capacity_mbps = 2.0
delay_ms = 75.0
[[flows]]
id = "phone"
protocol = "mptcp"
paths = [["wifi"], ["3g"]]
"""


def _write(tmp_path: Path, text: str, name: str = "s.toml") -> Path:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


def _error(path: Path) -> UserError:
    with pytest.raises(UserError) as info:
        load_scenario(path)
    return info.value


def _line_of(text: str, needle: str) -> int:
    return next(i for i, line in enumerate(text.splitlines(), 1) if needle in line)


def test_good_file_loads(tmp_path: Path) -> None:
    s = load_scenario(_write(tmp_path, GOOD_TOML))
    assert [link.id for link in s.links] == ["wifi", "3g"]
    assert s.flows[0].paths == [["wifi"], ["3g"]]


def test_default_scenario_loads() -> None:
    s = load_scenario(ROOT / "scenarios" / "default.toml")
    assert s.links[0].queue is not None and s.links[0].queue.kind == "droptail"


@pytest.mark.parametrize(
    "old,new,needle,field,expected",
    [
        (
            "capacity_mbps = 8.0",
            "capcity_mbps = 8.0",
            "capcity_mbps",
            "links[0].capcity_mbps",
            "unknown field 'capcity_mbps' (did you mean 'capacity_mbps'?); expected one of: id,",
        ),
        (
            'paths = [["wifi"], ["3g"]]',
            'paths = [["wifi"], ["lte"]]',
            "paths =",
            "flows[0].paths[1][0]",
            "unknown link 'lte'; links are: 3g, wifi",
        ),
        (
            "capacity_mbps = 2.0",
            "capacity_mbps = -2.0",
            "capacity_mbps = -2.0",
            "links[1].capacity_mbps",
            "expected a capacity in Mbit/s > 0, got -2",
        ),
        (
            "loss = 0.0",
            "loss = 1.0",
            "loss = 1.0",
            "links[0].loss",
            "expected a probability in [0, 1), got 1",
        ),
        (
            "ms = 80 }",
            "ms = 80, packets = 10 }",
            "queue =",
            "links[0].queue",
            "a droptail queue takes exactly one of packets, bytes or ms",
        ),
        (
            "seed = 7",
            "seed = 7.5",
            "seed =",
            "seed",
            "expected an integer, got 7.5",
        ),
    ],
    ids=["unknown field", "missing link", "negative capacity", "loss of one", "queue", "type"],
)
def test_toml_errors_name_file_line_field_and_expectation(
    tmp_path: Path, old: str, new: str, needle: str, field: str, expected: str
) -> None:
    text = GOOD_TOML.replace(old, new)
    assert text != GOOD_TOML
    path = _write(tmp_path, text)
    err = _error(path)
    assert err.file == str(path)
    assert err.line == _line_of(text, needle)
    assert err.field == field
    assert err.detail.startswith(expected)
    first, *others = err.problems()
    assert first.startswith(f"{path}:{err.line}: {field}: ")
    # Other problems of the same file come with it, each located on its own line.
    assert all(p.startswith(f"{path}:") and "\n" not in p for p in (first, *others))
    assert str(err) == "\n".join(err.problems())


def test_missing_key_points_at_its_table(tmp_path: Path) -> None:
    text = GOOD_TOML.replace("delay_ms = 75.0\n", "")
    err = _error(_write(tmp_path, text))
    assert err.field == "links[1].delay_ms"
    assert err.line == 9  # the second [[links]] header
    assert err.detail.startswith("missing field 'delay_ms'")


def test_json_errors_have_lines_too(tmp_path: Path) -> None:
    data = {
        "duration_s": 10,
        "links": [{"id": "a", "capacity_mbps": 1, "delay_ms": 1, "loss": 1.5}],
        "flows": [{"id": "f", "protocol": "tcp", "paths": [["a"]]}],
    }
    text = json.dumps(data, indent=2)
    err = _error(_write(tmp_path, text, "s.json"))
    assert (err.field, err.line) == ("links[0].loss", _line_of(text, '"loss"'))
    assert err.detail == "expected a probability in [0, 1), got 1.5"


def test_toml_syntax_error(tmp_path: Path) -> None:
    text = GOOD_TOML.replace('id = "3g"', 'id = "3g')
    err = _error(_write(tmp_path, text))
    assert err.line == _line_of(text, 'id = "3g')
    assert err.detail.startswith("invalid TOML:") and "column" in err.detail


def test_json_syntax_error(tmp_path: Path) -> None:
    err = _error(_write(tmp_path, '{\n  "duration_s": 10,\n  "links": [,]\n}', "s.json"))
    assert err.line == 3 and err.detail.startswith("invalid JSON:")


def test_a_json_key_given_twice_is_refused_as_toml_refuses_it(tmp_path: Path) -> None:
    text = '{\n  "duration_s": 10,\n  "seed": 7,\n  "seed": 8,\n  "links": [],\n  "flows": []\n}'
    err = _error(_write(tmp_path, text, "s.json"))
    assert err.line == 4 and err.detail.startswith("key 'seed' is given twice in one object")
    # Objects of a list may share keys; only one object taking a key twice is refused.
    ok = json.dumps(
        {
            "duration_s": 10,
            "links": [
                {"id": "a", "capacity_mbps": 1, "delay_ms": 1},
                {"id": "b", "capacity_mbps": 1, "delay_ms": 1},
            ],
            "flows": [{"id": "f", "protocol": "tcp", "paths": [["a"]]}],
        },
        indent=2,
    )
    assert load_scenario(_write(tmp_path, ok, "ok.json")).links[1].id == "b"


@pytest.mark.parametrize(
    "name,content,expected",
    [
        ("s.yaml", "a: 1", "expected a .toml or .json file"),
        ("missing.toml", None, "no such file"),
        ("list.json", "[1, 2]", "expected a table of scenario fields"),
        ("bytes.toml", b"\xff\xfe", "not UTF-8 text"),
    ],
)
def test_file_problems(tmp_path: Path, name: str, content: str | bytes | None, expected: str):
    path = tmp_path / name
    if isinstance(content, bytes):
        path.write_bytes(content)
    elif content is not None:
        path.write_text(content)
    err = _error(path)
    assert err.file == str(path) and err.detail.startswith(expected)


@pytest.mark.parametrize("suffix", [".toml", ".json"])
def test_only_the_problems_shown_are_located(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, suffix: str
) -> None:
    """Each problem's line takes a scan of the text: a file with thousands of bad links took
    minutes to be refused. Only the ten shown are located; the rest are counted."""
    from mptcplab.scenario import load as load_module

    calls = []
    for name in ("line_of", "json_line_of"):
        real = getattr(load_module, name)
        monkeypatch.setattr(load_module, name, lambda *a, _real=real: calls.append(a) or _real(*a))
    links = [{"id": f"l{i}", "capacity_mbps": -1, "delay_ms": 1.0} for i in range(500)]
    flow = {"id": "f", "protocol": "tcp", "paths": [["l0"]]}
    data = {"duration_s": 2.0, "links": links, "flows": [flow]}
    path = tmp_path / f"many{suffix}"
    if suffix == ".json":
        path.write_text(json.dumps(data))
    else:
        body = "".join(
            f'[[links]]\nid = "l{i}"\ncapacity_mbps = -1\ndelay_ms = 1.0\n' for i in range(500)
        )
        flows = '[[flows]]\nid = "f"\nprotocol = "tcp"\npaths = [["l0"]]\n'
        path.write_text(f"duration_s = 2.0\n{body}{flows}")
    with pytest.raises(UserError) as err:
        load_scenario(path)
    problems = err.value.problems()
    assert len(problems) == 10 and problems[-1].endswith("(and 490 more problems)")
    assert all(f"{path}:" in p for p in problems)
    assert len(calls) == 10

"""Field paths into a scenario file (``links[wifi].queue.ms``): parsing, resolving ids to
positions, and the scenario with the fields set."""

from __future__ import annotations

from pathlib import Path

import pytest

from mptcplab.errors import UserError
from mptcplab.scenario import ScenarioFile, load_scenario
from mptcplab.scenario.field_paths import parse_field_path

ROOT = Path(__file__).resolve().parents[2]
LOSSY = ROOT / "scenarios" / "lossy_paths.toml"


@pytest.mark.parametrize(
    ("raw", "parts"),
    [
        ("duration_s", ("duration_s",)),
        ("links[clean].loss", ("links", "clean", "loss")),
        ("flows[0].paths[1][0]", ("flows", 0, "paths", 1, 0)),
        ("links[ wifi ].queue.ms", ("links", "wifi", "queue", "ms")),
    ],
)
def test_paths_parse(raw: str, parts: tuple) -> None:
    assert parse_field_path(raw) == parts


@pytest.mark.parametrize("raw", ["", ".loss", "links.", "links[]", "links[0]x", "1links", "a..b"])
def test_what_is_not_a_path_is_refused(raw: str) -> None:
    with pytest.raises(ValueError):
        parse_field_path(raw)


def test_an_id_resolves_to_its_position_and_a_position_to_itself() -> None:
    base = ScenarioFile(LOSSY)
    assert base.resolve("links[clean].loss") == "links[1].loss"
    assert base.resolve("links[1].loss") == "links[1].loss"
    assert base.resolve("flows[mptcp].paths[1]") == "flows[0].paths[1]"
    # A field the file leaves at its default can be set.
    assert base.resolve("flows[mptcp].sndbuf_bytes") == "flows[0].sndbuf_bytes"


def test_with_fields_changes_those_fields_and_nothing_else() -> None:
    base = load_scenario(LOSSY).to_dict()
    changed = ScenarioFile(LOSSY).with_fields(
        {"links[clean].loss": 0.002, "flows[0].paths": [["clean"], ["lossy"]]}
    )
    expected = {**base}
    expected["links"] = [base["links"][0], {**base["links"][1], "loss": 0.002}]
    expected["flows"] = [{**base["flows"][0], "paths": [["clean"], ["lossy"]]}]
    assert changed.to_dict() == expected


def test_with_fields_takes_a_mapping() -> None:
    with pytest.raises(UserError) as err:
        ScenarioFile(LOSSY).with_fields([("links[clean].loss", 0.01)])  # type: ignore[arg-type]
    assert err.value.field == "values"
    assert "expected a mapping of field paths to values" in err.value.detail


def test_with_fields_names_the_path_as_given() -> None:
    with pytest.raises(UserError) as err:
        ScenarioFile(LOSSY).with_fields({"links[dirty].loss": 0.1})
    assert err.value.field == "links[dirty].loss"
    assert "no element of links with id 'dirty'; ids: lossy, clean" in err.value.detail
    with pytest.raises(UserError) as err:
        ScenarioFile(LOSSY).with_fields({"links[clean].loss": 1.5})
    assert err.value.field == "links[1].loss"


def test_a_table_and_a_field_inside_it_are_both_set() -> None:
    table = {"id": "clean", "capacity_mbps": 4.0, "delay_ms": 5.0}
    changed = ScenarioFile(LOSSY).with_fields({"links[clean]": table, "links[clean].loss": 0.02})
    assert changed.links[1].capacity_mbps == 4.0 and changed.links[1].loss == 0.02


@pytest.mark.parametrize(
    ("values", "field", "detail"),
    [
        # Setting a link to a number, then a field of it: a traceback (TypeError).
        ({"links[0]": 5, "links[0].loss": 0.1}, "links[0].loss", "what held 'loss' with 5"),
        # An id resolved in the file as written, inside a list set anew: the loss went to the
        # new list's first link, "b", silently.
        (
            {
                "links": [
                    {"id": "b", "capacity_mbps": 8.0, "delay_ms": 10.0},
                    {"id": "clean", "capacity_mbps": 8.0, "delay_ms": 10.0},
                ],
                "links[clean].loss": 0.1,
            },
            "links[1].loss",
            "lies inside links, which another setting replaces with a new list",
        ),
        # An element of a list set empty: a traceback (IndexError).
        (
            {"flows[0].paths": [], "flows[0].paths[0][0]": "lossy"},
            "flows[0].paths[0][0]",
            "lies inside flows[0].paths, which another setting replaces with a new list",
        ),
    ],
    ids=["inside-a-number", "inside-a-new-list", "inside-an-empty-list"],
)
def test_a_field_another_setting_took_away_is_refused(
    values: dict, field: str, detail: str
) -> None:
    with pytest.raises(UserError) as err:
        ScenarioFile(LOSSY).with_fields(values)
    assert err.value.field == field
    assert detail in err.value.detail


def test_digits_that_are_another_elements_id_are_refused(tmp_path: Path) -> None:
    """links[1] is a position; with links whose ids are "1" and "0", it set the loss of the
    link with id "0", silently. Where an element's id is the digits given and it sits at
    another position, the path is refused; where they agree, it is that element."""
    link = "capacity_mbps = 8.0\ndelay_ms = 10.0\n"
    flow = '[[flows]]\nid = "f"\nprotocol = "tcp"\npaths = [["1"]]\n'
    path = tmp_path / "digits.toml"
    path.write_text(
        f'duration_s = 5.0\n[[links]]\nid = "1"\n{link}[[links]]\nid = "0"\n{link}{flow}'
    )
    with pytest.raises(UserError) as err:
        ScenarioFile(path).with_fields({"links[1].loss": 0.5})
    assert "links[1] is position 1, but the element with id '1' is at position 0" in str(err.value)
    path.write_text(
        f'duration_s = 5.0\n[[links]]\nid = "0"\n{link}[[links]]\nid = "1"\n{link}{flow}'
    )
    assert ScenarioFile(path).with_fields({"links[1].loss": 0.5}).links[1].loss == 0.5

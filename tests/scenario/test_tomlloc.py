"""tomlloc: line numbers of keys in TOML and JSON documents. The expected lines are known by
construction (the tests write the documents), and a property test generates documents together
with the line of every key."""

from __future__ import annotations

import json
import tomllib

import hypothesis.strategies as st
from hypothesis import given, settings

from mptcplab.tomlloc import json_line_of, line_of, parse_path

DOC = """\
# A scenario with every construct the scanner must follow.
duration_s = 30.0   # [[links]] in a comment is not a header
seed = 7
title = "a # that is not a comment, [[links]] and = signs"

[[links]]
id = "wifi"
capacity_mbps = 8.0
queue = { kind = "droptail", ms = 80 }
loss = 0.0

[[links]]
id = "3g"
capacity_mbps = 2.0
queue.kind = "red"
queue.min_packets = 5
notes = '''
[[links]]
id = "fake"
'''
delay_ms = 75.0

[[flows]]
id = "laptop"
paths = [
  ["wifi"],   # first subflow
  ["3g"],
]
app = { kind = "blocks", block_bytes = 8192 }

[flows.tcp]
initial_window = 4

[[flows]]
id = "phone"
"quoted key" = 1
paths = [["3g"]]
"""


def test_document_is_valid_toml() -> None:
    data = tomllib.loads(DOC)
    assert len(data["links"]) == 2 and len(data["flows"]) == 2


def test_top_level_keys() -> None:
    assert line_of(DOC, ("duration_s",)) == 2
    assert line_of(DOC, ("seed",)) == 3
    assert line_of(DOC, ("title",)) == 4


def test_array_of_tables_elements_and_keys() -> None:
    assert line_of(DOC, ("links",)) == 6
    assert line_of(DOC, ("links", 0)) == 6
    assert line_of(DOC, ("links", 0, "capacity_mbps")) == 8
    assert line_of(DOC, ("links", 1)) == 12
    assert line_of(DOC, ("links", 1, "capacity_mbps")) == 14
    assert (
        line_of(DOC, ("links", 1, "delay_ms")) == 21
    )  # after a multi-line string with a fake header


def test_inline_tables_point_at_their_line() -> None:
    assert line_of(DOC, ("links", 0, "queue")) == 9
    assert line_of(DOC, ("links", 0, "queue", "ms")) == 9
    assert line_of(DOC, ("flows", 0, "app", "block_bytes")) == 29


def test_dotted_keys() -> None:
    assert line_of(DOC, ("links", 1, "queue")) == 15
    assert line_of(DOC, ("links", 1, "queue", "min_packets")) == 16


def test_multi_line_arrays_locate_elements() -> None:
    assert line_of(DOC, ("flows", 0, "paths")) == 25
    assert line_of(DOC, ("flows", 0, "paths", 0)) == 26
    assert line_of(DOC, ("flows", 0, "paths", 1, 0)) == 27


def test_subtable_of_an_array_element() -> None:
    assert line_of(DOC, ("flows", 0, "tcp")) == 31
    assert line_of(DOC, ("flows", 0, "tcp", "initial_window")) == 32
    assert line_of(DOC, ("flows", 1, "id")) == 35
    assert line_of(DOC, ("flows", 1, "quoted key")) == 36


def test_missing_keys_fall_back_to_the_enclosing_table() -> None:
    assert line_of(DOC, ("links", 0, "jitter_ms")) == 6
    assert line_of(DOC, ("flows", 0, "tcp", "abc_limit")) == 31
    # Pydantic puts the union tag in its locations; the nearest written key is the queue.
    assert line_of(DOC, ("links", 0, "queue", "droptail", "ms")) == 9
    assert line_of(DOC, ("warmup_s",)) is None
    assert line_of(DOC, ()) is None
    assert line_of(DOC, ("links", 5, "id")) == 6  # the array itself


def test_rust_dotted_paths() -> None:
    assert parse_path("links[0].capacity_mbps") == ("links", 0, "capacity_mbps")
    assert parse_path("flows[1].paths[0][2]") == ("flows", 1, "paths", 0, 2)
    assert parse_path("flows[0].app.block_bytes") == ("flows", 0, "app", "block_bytes")
    assert parse_path("warmup_s") == ("warmup_s",)
    assert line_of(DOC, "links[1].capacity_mbps") == 14
    assert line_of(DOC, "flows[0].paths[1][0]") == 27


def test_tables_headers_with_spaces_and_nested_arrays_of_tables() -> None:
    doc = (
        "[[ a ]]\nx = 1\n[[a.b]]\ny = 2\n[[a.b]]\ny = 3\n[[a]]\n[[a.b]]\ny = 4\n[ c . d ]\nz = 5\n"
    )
    tomllib.loads(doc)
    assert line_of(doc, ("a", 0, "x")) == 2
    assert line_of(doc, ("a", 0, "b", 0, "y")) == 4
    assert line_of(doc, ("a", 0, "b", 1, "y")) == 6
    assert line_of(doc, ("a", 1)) == 7
    assert line_of(doc, ("a", 1, "b", 0, "y")) == 9
    assert line_of(doc, ("c", "d", "z")) == 11
    assert line_of(doc, ("c",)) == 10


def test_arrays_of_inline_tables() -> None:
    doc = (
        'links = [\n  { id = "a", capacity_mbps = 1 },\n'
        '  { id = "b",\n    capacity_mbps = 2 },\n]\n'
    )
    assert line_of(doc, ("links", 1)) == 3
    assert line_of(doc, ("links", 0, "capacity_mbps")) == 2
    assert line_of(doc, ("links", 1, "capacity_mbps")) == 4


def test_strings_with_escapes_and_quotes() -> None:
    doc = 'a = "say \\"[[x]]\\" # no"\nb = """two\n""quotes""" \nc = 1\n'
    assert tomllib.loads(doc)["c"] == 1
    assert line_of(doc, ("b",)) == 2
    assert line_of(doc, ("c",)) == 4


def test_unreadable_text_gives_what_was_found() -> None:
    doc = 'a = 1\n[[links\nb = "unterminated\nc = 3\n'
    assert line_of(doc, ("a",)) == 1
    assert line_of(doc, ("c",)) == 4
    assert line_of("", ("a",)) is None
    assert line_of("= = =\n[", ("a",)) is None


def test_json_documents() -> None:
    doc = json.dumps(
        {"duration_s": 3, "links": [{"id": "a", "queue": {"kind": "red"}}], "flows": []},
        indent=2,
    )
    lines = doc.splitlines()
    expected = next(i for i, t in enumerate(lines, 1) if '"kind"' in t)
    assert json_line_of(doc, ("links", 0, "queue", "kind")) == expected
    assert json_line_of(doc, "links[0].capacity_mbps") == next(
        i for i, t in enumerate(lines, 1) if t.strip() == "{" and i > 1
    )
    assert json_line_of(doc, ("duration_s",)) == 2
    assert json_line_of('{"a": [1, 2', ("a", 1)) == 1


# ---- property: a generator that writes TOML and records the line of every key ---------------

_keys = st.from_regex(r"[a-z][a-z0-9_]{0,6}", fullmatch=True)
_scalars = st.one_of(
    st.integers(-1000, 1000),
    st.floats(allow_nan=False, allow_infinity=False, width=32),
    st.booleans(),
    st.text(alphabet="ab #=[]{}'\"\\,", max_size=8),
)


def _toml_scalar(v: object) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, str):
        return json.dumps(v)  # a JSON string is a valid TOML basic string for this alphabet
    return repr(v)


@st.composite
def _documents(draw: st.DrawFn) -> tuple[str, dict[tuple, int]]:
    lines: list[str] = []
    where: dict[tuple, int] = {}

    def emit(text: str) -> int:
        lines.append(text)
        return len(lines)

    for key in draw(st.lists(_keys, max_size=3, unique=True)):
        where[("top_" + key,)] = emit(f"top_{key} = {_toml_scalar(draw(_scalars))}  # c")
    tables = draw(st.lists(_keys.map(lambda k: "t_" + k), min_size=1, max_size=3, unique=True))
    for name in tables:
        for idx in range(draw(st.integers(1, 3))):
            if draw(st.booleans()):
                emit("")
            where[(name, idx)] = emit(f"[[{name}]]")
            for key in draw(st.lists(_keys, max_size=3, unique=True)):
                style = draw(st.sampled_from(["scalar", "inline", "array", "multiline"]))
                if style == "scalar":
                    where[(name, idx, key)] = emit(f"{key} = {_toml_scalar(draw(_scalars))}")
                elif style == "inline":
                    line = len(lines) + 1
                    inner = draw(st.lists(_keys, min_size=1, max_size=3, unique=True))
                    body = ", ".join(f"{k} = {_toml_scalar(draw(_scalars))}" for k in inner)
                    emit(f"{key} = {{ {body} }}")
                    where[(name, idx, key)] = line
                    for k in inner:
                        where[(name, idx, key, k)] = line
                elif style == "array":
                    n = draw(st.integers(0, 3))
                    line = emit(f"{key} = [{', '.join(_toml_scalar(k) for k in range(n))}]")
                    where[(name, idx, key)] = line
                    for k in range(n):
                        where[(name, idx, key, k)] = line
                else:
                    where[(name, idx, key)] = emit(f"{key} = [")
                    for k in range(draw(st.integers(0, 3))):
                        where[(name, idx, key, k)] = emit(f'  [{k}, "x]"],  # ]')
                    emit("]")
    return "\n".join(lines) + "\n", where


@settings(max_examples=200, deadline=None)
@given(_documents())
def test_generated_documents(doc: tuple[str, dict[tuple, int]]) -> None:
    text, where = doc
    tomllib.loads(text)  # the generator writes valid TOML
    for loc, line in where.items():
        assert line_of(text, loc) == line, (loc, text)

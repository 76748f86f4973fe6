"""The pydantic model mirrors crates/mpsim/src/scenario.rs: the same fields, enum spellings and
defaults. The Rust source is the oracle; it is read here so that a change on either side that
is not made on the other fails a test."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any, get_args

import pytest
from pydantic import BaseModel

from mptcplab.scenario import model as m

RUST = Path(__file__).resolve().parents[2] / "crates" / "mpsim" / "src" / "scenario.rs"
SOURCE = RUST.read_text(encoding="utf-8")


def _block(header: str) -> str:
    """The text between the braces that follow ``header``."""
    start = SOURCE.index(header)
    open_at = SOURCE.index("{", start)
    depth = 0
    for k in range(open_at, len(SOURCE)):
        if SOURCE[k] == "{":
            depth += 1
        elif SOURCE[k] == "}":
            depth -= 1
            if depth == 0:
                return SOURCE[open_at + 1 : k]
    raise AssertionError(f"unbalanced braces after {header}")


def _fields(body: str) -> list[tuple[str, str, str | None]]:
    """``(name, rust type, serde default attribute)`` for each field of a struct body."""
    out = []
    default: str | None = None
    for line in body.splitlines():
        line = line.strip()
        attr = re.match(r"#\[serde\(default(?: = \"(\w+)\")?(?:, [^)]*)?\)\]", line)
        if attr:
            default = attr.group(1) or ""
            continue
        field = re.match(r"(?:pub )?(\w+): ([^,]+),?$", line)
        if field and not line.startswith("//"):
            out.append((field.group(1), field.group(2).strip(), default))
            default = None
    return out


def _variant_body(enum: str, variant: str) -> str:
    body = _block(f"pub enum {enum}")
    start = body.index(f"{variant} {{")
    return _block_of(body, start)


def _block_of(text: str, start: int) -> str:
    open_at = text.index("{", start)
    depth = 0
    for k in range(open_at, len(text)):
        depth += {"{": 1, "}": -1}.get(text[k], 0)
        if depth == 0:
            return text[open_at + 1 : k]
    raise AssertionError("unbalanced")


STRUCTS: list[tuple[str, type[BaseModel]]] = [
    ("pub struct Scenario", m.Scenario),
    ("pub struct LinkSpec", m.LinkSpec),
    ("pub struct FlowSpec", m.FlowSpec),
    ("pub struct TcpOptions", m.TcpOptions),
]
VARIANTS: list[tuple[str, str, type[BaseModel]]] = [
    ("QueueSpec", "Droptail", m.DropTailQueue),
    ("QueueSpec", "Red", m.RedQueue),
    ("AppSpec", "Blocks", m.BlocksApp),
    ("AppSpec", "Size", m.SizeApp),
]


def _rust_fields() -> list[tuple[type[BaseModel], list[tuple[str, str, str | None]]]]:
    out = [(model, _fields(_block(header))) for header, model in STRUCTS]
    out += [(model, _fields(_variant_body(e, v))) for e, v, model in VARIANTS]
    out.append((m.BulkApp, []))
    return out


@pytest.mark.parametrize("model,fields", _rust_fields(), ids=lambda x: getattr(x, "__name__", ""))
def test_same_fields(model: type[BaseModel], fields: list[tuple[str, str, str | None]]) -> None:
    python = set(model.model_fields) - {"kind"}
    rust = {name for name, _, _ in fields}
    assert python == rust
    assert model.model_config.get("extra") == "forbid"  # deny_unknown_fields


def _rust_literal(fn: str) -> Any:
    body = _block(f"fn {fn}()").strip()
    if body in ("true", "false"):
        return body == "true"
    body = body.replace("_", "")
    return float(body) if "." in body else int(body)


def _enum_default(enum: str) -> str | None:
    """The default variant: marked ``#[default]`` or returned by ``impl Default``."""
    variant = re.search(r"#\[default\]\s*(\w+)", _block(f"pub enum {enum}"))
    if variant is None and f"impl Default for {enum}" in SOURCE:
        variant = re.search(rf"{enum}::(\w+)", _block(f"impl Default for {enum}"))
    return _spell(enum, variant.group(1)) if variant else None


def _spell(enum: str, variant: str) -> str:
    attrs = SOURCE[: SOURCE.index(f"pub enum {enum}")].rsplit("#[derive", 1)[1]
    if "snake_case" in attrs:
        return re.sub(r"(?<!^)([A-Z])", r"_\1", variant).lower()
    return variant.lower()


def _type_default(rust_type: str) -> Any:
    if rust_type.startswith("Option<"):
        return None
    if rust_type.startswith("Vec<"):
        return []
    if rust_type in ("f64",):
        return 0.0
    if rust_type in ("u32", "u64"):
        return 0
    if rust_type == "bool":
        return False
    if f"pub enum {rust_type}" in SOURCE:
        variant = _enum_default(rust_type)
        return NotImplemented if variant is None else variant
    return NotImplemented  # a struct: checked field by field elsewhere


@pytest.mark.parametrize("model,fields", _rust_fields(), ids=lambda x: getattr(x, "__name__", ""))
def test_same_defaults(model: type[BaseModel], fields: list[tuple[str, str, str | None]]) -> None:
    for name, rust_type, default in fields:
        info = model.model_fields[name]
        if default is None:
            assert info.is_required(), f"{model.__name__}.{name} is required in Rust"
            continue
        assert not info.is_required(), f"{model.__name__}.{name} has a default in Rust"
        expected = _rust_literal(default) if default else _type_default(rust_type)
        if expected is NotImplemented:
            continue
        actual = info.get_default(call_default_factory=True)
        if isinstance(actual, BaseModel) and "kind" in type(actual).model_fields:
            actual = actual.kind  # a tagged enum's default variant
        assert actual == expected, f"{model.__name__}.{name}"


def test_struct_defaults() -> None:
    # `tcp` defaults to TcpOptions::default(), `app` to the default AppSpec variant.
    assert _enum_default("AppSpec") == "bulk"
    flow = m.FlowSpec(id="f", protocol="tcp", paths=[["a"]])
    assert flow.app == m.BulkApp()
    assert flow.tcp == m.TcpOptions()


ENUMS = {
    "TraceKind": m.TraceKind,
    "Protocol": m.Protocol,
    "CcKind": m.CcKind,
    "SchedulerKind": m.SchedulerKind,
    "Penalization": m.Penalization,
    "BufferMode": m.BufferMode,
    "RtoPolicy": m.RtoPolicy,
    "CountMode": m.CountMode,
}


@pytest.mark.parametrize("enum", sorted(ENUMS))
def test_same_enum_spellings(enum: str) -> None:
    body = _block(f"pub enum {enum}")
    variants = [
        v for v in re.findall(r"^\s*(\w+),\s*$", body, flags=re.M) if not v.startswith("//")
    ]
    assert set(get_args(ENUMS[enum])) == {_spell(enum, v) for v in variants}


def test_tags_and_constants() -> None:
    assert {"droptail", "red"} == {
        t.model_fields["kind"].default for t in (m.DropTailQueue, m.RedQueue)
    }
    assert f"MSS_BYTES: u32 = {m.MSS_BYTES};" in SOURCE
    assert f"HEADER_BYTES: u32 = {m.HEADER_BYTES};" in SOURCE
    assert "DEFAULT_BUFFER_CAP_BYTES: u64 = 4 * 1024 * 1024;" in SOURCE
    assert m.DEFAULT_BUFFER_CAP_BYTES == 4 * 1024 * 1024

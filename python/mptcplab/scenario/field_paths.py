"""A scenario file with some of its fields set by path: the base of a campaign in place of a
template, and what ``mptcplab sim FILE --set PATH=VALUE`` runs.

    from mptcplab.scenario import ScenarioFile
    s = ScenarioFile("scenarios/lossy_paths.toml").with_fields({"links[lossy].loss": 0.02})

A template covers the topologies of a published study; a researcher's own network (three
access links and a shared core, say) is a scenario file. With ``[scenario] file = "net.toml"``
a campaign's factors set fields of that file's scenario by path::

    [scenario]
    file = "../scenarios/shared_bottleneck.toml"   # relative to the campaign file
    duration_s = 20.0                              # any other key: a field set for every run
    "flows[tcp].rcvbuf_bytes" = 1048576

    [factors.capacity]
    low = 2.0
    high = 50.0
    param = "links[shared].capacity_mbps"          # an element of a list by its id, or [0]

A path is the simulator's notation for a field (``flows[0].paths[1]``, as in its error
messages), where an element of ``links`` or ``flows`` may also be picked by its ``id``. The
table or list that holds the field must be in the file (a factor may set a field the file
leaves at its default, not one inside a table it does not write). Every run's scenario is the
file's with the values written in, validated like a written file.
"""

from __future__ import annotations

import copy
import os
import re
import reprlib
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from mptcplab.errors import UserError
from mptcplab.scenario.load import load_document, scenario_from_data
from mptcplab.scenario.model import Scenario, dotted, issues

__all__ = ["FieldPath", "ScenarioFile", "parse_field_path"]

FieldPath = tuple[str | int, ...]
"""A field's location with every list element by position: ``('links', 0, 'capacity_mbps')``."""

# A key, then any number of [selector]s; keys joined by dots.
_KEY = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_SELECTOR = re.compile(r"\[([^\[\]]+)\]")
_EXAMPLES = "'links[wifi].capacity_mbps', 'flows[0].cc' or 'duration_s'"


def parse_field_path(raw: str) -> tuple[str | int, ...]:
    """``"links[wifi].queue.ms"`` → ``('links', 'wifi', 'queue', 'ms')`` with digits as ints:
    selectors are still ids or positions (see :meth:`ScenarioFile.resolve`). ``ValueError``
    when ``raw`` is not a path."""
    out: list[str | int] = []
    pos = 0
    while True:
        key = _KEY.match(raw, pos)
        if key is None:
            raise ValueError(raw)
        out.append(key.group())
        pos = key.end()
        while (selector := _SELECTOR.match(raw, pos)) is not None:
            text = selector.group(1).strip()
            out.append(int(text) if text.isdigit() else text)
            pos = selector.end()
        if pos == len(raw):
            return tuple(out)
        if raw[pos] != ".":
            raise ValueError(raw)
        pos += 1


class ScenarioFile:
    """A valid scenario file, and the scenario it gives with some fields set by path.

    A campaign calls it like a template, with paths as keywords (``**{"links[0].loss": 0.01}``).
    """

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self.path = Path(path)
        data, text, syntax = load_document(path)
        scenario_from_data(data, file=str(path), text=text, syntax=syntax)  # the base is valid
        self.document: dict[str, Any] = data
        self.text = text

    def resolve(self, raw: str) -> str:
        """The path ``raw`` with ids turned into positions (``links[0].capacity_mbps``), after
        checking that what holds the field is in the file. ``UserError`` (no file or line: the
        caller knows where ``raw`` was written) saying what is there instead."""
        try:
            parts = parse_field_path(raw)
        except ValueError:
            raise UserError(
                f"expected a field path of the scenario file, such as {_EXAMPLES}; got {raw!r}"
            ) from None
        node: Any = self.document
        resolved: list[str | int] = []
        for depth, part in enumerate(parts):
            last = depth == len(parts) - 1
            where = dotted(resolved) or "the scenario"
            if isinstance(node, list):
                index = self._element(node, part, where)
                resolved.append(index)
                node = node[index]
                continue
            if not isinstance(part, str) or not isinstance(node, dict):
                raise UserError(
                    f"{where} is a {_kind(node)} in {self.path.name}, "
                    f"which has no {'element' if isinstance(part, int) else 'field'} {part!r}"
                )
            resolved.append(part)
            if part in node:
                node = node[part]
            elif not last:
                raise UserError(
                    f"{self.path.name} writes no '{part}' in {where}; set the whole "
                    f'of it instead ("{dotted(resolved)}" = ...), or write it in the file'
                )
            else:
                self._check_known(tuple(resolved))
        return dotted(resolved)

    def _check_known(self, loc: FieldPath) -> None:
        """A field the file leaves out must still be one the scenario has: the model itself
        says so, given a value of no type at ``loc`` (an unknown key is refused as such, a
        known one for its type)."""
        data = copy.deepcopy(self.document)
        _set(data, loc, _Probe(), dotted(loc))
        try:
            Scenario.model_validate(data)
        except ValidationError as exc:
            for found in issues(exc, Scenario):
                if found.loc == loc and found.message.startswith("unknown field"):
                    raise UserError(found.message) from None

    def _element(self, items: list[Any], selector: str | int, where: str) -> int:
        if isinstance(selector, int):
            named = [
                k
                for k, item in enumerate(items)
                if isinstance(item, dict) and item.get("id") == str(selector)
            ]
            if named and named != [selector]:
                # Digits are a position; an element whose id is those digits sits elsewhere.
                raise UserError(
                    f"{where}[{selector}] is position {selector}, but the element with id "
                    f"'{selector}' is at position {named[0]}: give another id, or the position "
                    "of the one meant"
                )
            if selector < len(items):
                return selector
            raise UserError(
                f"{self.path.name} gives {where} {len(items)} "
                f"element{'s' if len(items) != 1 else ''} (positions from 0)"
            )
        ids = [item.get("id") for item in items if isinstance(item, dict)]
        if selector in ids:
            return ids.index(selector)
        known = ", ".join(str(i) for i in ids if i is not None)
        raise UserError(
            f"{self.path.name} has no element of {where} with id "
            f"'{selector}'" + (f"; ids: {known}" if known else "")
        )

    def with_fields(self, values: Mapping[str, Any]) -> Scenario:
        """The file's scenario with the field at each path set to its value. ``UserError`` for
        a path that does not resolve (its ``field`` is the path as given), or for a result the
        model refuses (its ``field`` is the path that caused it, in the form of
        :meth:`resolve`, when one did)."""
        if not isinstance(values, Mapping):
            raise UserError(
                "expected a mapping of field paths to values, such as "
                f"{{'links[wifi].loss': 0.01}}; got {type(values).__name__}",
                field="values",
            )
        resolved: dict[str, Any] = {}
        for raw, value in values.items():
            try:
                resolved[self.resolve(raw)] = value
            except UserError as exc:
                raise UserError(exc.detail, field=raw) from None
        return self(**resolved)

    def __call__(self, **values: Any) -> Scenario:
        """:meth:`with_fields` for paths already in the form :meth:`resolve` gives."""
        data = copy.deepcopy(self.document)
        # A table first, then fields inside it, so that both take effect.
        parsed = {path: parse_field_path(path) for path in values}
        for path in sorted(values, key=lambda p: len(parsed[p])):
            _refuse_inside_a_new_list(path, parsed, values)
            _set(data, parsed[path], copy.deepcopy(values[path]), path)
        try:
            return Scenario.model_validate(data)
        except ValidationError as exc:
            found = issues(exc, Scenario)[0]
            raise UserError(
                found.message, field=_culprit(found.loc, values) or found.field
            ) from None


class _Probe:
    """A value no field accepts."""


def _refuse_inside_a_new_list(
    path: str, parsed: Mapping[str, FieldPath], values: Mapping[str, Any]
) -> None:
    """A path was resolved against the file as written (an element's id to its position): inside
    a list that another setting replaces, the position may name another element, or none."""
    loc = parsed[path]
    for outer, parts in parsed.items():
        inside = len(parts) < len(loc) and loc[: len(parts)] == parts
        if inside and isinstance(values[outer], list):
            raise UserError(
                f"lies inside {outer}, which another setting replaces with a new list; set "
                "the field in that list instead",
                field=path,
            )


def _set(data: dict[str, Any], loc: tuple[str | int, ...], value: Any, path: str) -> None:
    node: Any = data
    for depth, part in enumerate(loc):
        try:
            if depth == len(loc) - 1:
                node[part] = value
            else:
                node = node[part]
        except (KeyError, IndexError, TypeError):
            # Only another setting can have changed what the path resolved to.
            raise UserError(
                f"another setting replaced what held {part!r} with {reprlib.repr(node)}",
                field=path,
            ) from None


def _culprit(loc: tuple[str | int, ...], values: Mapping[str, Any]) -> str | None:
    """The set path at or above the problem's location, else one below it (a table that lost a
    required field)."""
    for path in values:
        parts = parse_field_path(path)
        if loc[: len(parts)] == parts or parts[: len(loc)] == loc:
            return path
    return None


def _kind(node: Any) -> str:
    if isinstance(node, dict):
        return "table"
    if isinstance(node, list):
        return "list"
    return f"{type(node).__name__} value"

"""Changes to a campaign file made when it is run, not written into it.

    mptcplab run campaigns/reproduce-balia-responsiveness.toml \\
        --set backend=emu --set scenario.scheduler=linger -o results/balia-kernel/store.sqlite

Each ``KEY=VALUE`` sets one key of the TOML document before it is validated, so a changed
campaign is checked exactly like a written one. ``KEY`` is a dotted path (``backend``,
``scenario.scheduler``, ``factors.queue_packets.levels``, ``published[0].tolerance``); tables on
the way are created when missing. ``VALUE`` is read as a TOML value (``2``, ``1.5``, ``true``,
``[50]``, ``"text"``); text that is not one — a bare word such as ``emu`` — is taken as a string.

Some keys are alternatives: a campaign gives ``backend`` or ``backends``, a scenario ``template``
or ``file``. Setting one removes the other, so ``--set backend=sim`` narrows a cross-validation
campaign to the simulator and ``--set scenario.file=...`` replaces its template.

A problem in a changed key is reported against the option that set it rather than a line of the
file. The store keeps the file's text with the changes appended as comments (see
:func:`annotate`), so the report and anyone reading the provenance see what the runs used.
"""

from __future__ import annotations

import copy
import json
import re
import tomllib
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from mptcplab.errors import UserError
from mptcplab.tomlloc import parse_path

__all__ = [
    "Override",
    "annotate",
    "apply",
    "blamed",
    "changed_inside",
    "from_mapping",
    "from_sequence",
    "parse_option",
    "parse_value",
    "stored",
]

Loc = tuple[str | int, ...]

_BARE_KEY = re.compile(r"[A-Za-z0-9_-]+")

# Keys of which a campaign gives one or the other: setting one drops its alternative.
_ALTERNATIVES: dict[Loc, Loc] = {
    ("backend",): ("backends",),
    ("backends",): ("backend",),
    ("scenario", "template"): ("scenario", "file"),
    ("scenario", "file"): ("scenario", "template"),
}

# The comment block `annotate` appends to a campaign's text; `stored` reads it back.
_MARKER = "# ---- changed when run (mptcplab run --set KEY=VALUE); the runs used these values ----"
_ENTRY = "#   "


@dataclass(frozen=True)
class Override:
    key: Loc
    value: Any
    shown: str  # how the user wrote it, for messages: "--set backend=emu"

    @property
    def dotted(self) -> str:
        """The key as written on the command line (parts that are not bare keys quoted)."""
        return self.prefix(len(self.key))

    def prefix(self, n: int) -> str:
        """The first ``n`` parts of the key, dotted."""
        out = ""
        for part in self.key[:n]:
            if isinstance(part, int):
                out += f"[{part}]"
                continue
            name = part if _BARE_KEY.fullmatch(part) else json.dumps(part, ensure_ascii=False)
            out += f".{name}" if out else name
        return out


def _key(text: str, shown: str) -> Loc:
    try:
        key = parse_path(text)
    except ValueError:
        key = ()
    if not key or not isinstance(key[0], str):
        raise UserError(
            f"expected KEY=VALUE with a dotted key such as scenario.scheduler, got '{text}'",
            field=shown,
        )
    return key


def parse_value(text: str) -> Any:
    """A value as written on the command line: TOML (`2`, `1.5`, `true`, `[50]`, `"text"`),
    or else the text itself (a bare word such as `emu`)."""
    try:
        return tomllib.loads(f"value = {text}")["value"]
    except tomllib.TOMLDecodeError:
        return text  # a bare word: `--set backend=emu`


def parse_option(raw: str) -> Override:
    """One ``--set KEY=VALUE`` option."""
    shown = f"--set {raw}"
    key_text, sep, value_text = raw.partition("=")
    if not sep:
        raise UserError(f"expected KEY=VALUE (e.g. --set backend=emu), got '{raw}'", field="--set")
    return Override(_key(key_text.strip(), shown), parse_value(value_text.strip()), shown)


def from_mapping(changes: Mapping[str, Any]) -> tuple[Override, ...]:
    """Changes given from Python: ``{"backend": "emu", "scenario.scheduler": "linger"}``."""
    out = []
    for key, value in changes.items():
        shown = f"{key}={value!r}"
        out.append(Override(_key(str(key), shown), value, shown))
    return tuple(out)


_PYTHON_FORMS = (
    "a mapping such as {'backend': 'emu'} or a list of 'KEY=VALUE' strings such as "
    "['backend=emu'], as --set takes them"
)


def from_sequence(changes: Any) -> tuple[Override, ...]:
    """Changes given from Python as a list: ``["backend=emu", "design.points=4"]``, read as
    ``--set`` reads its options (or overrides already made)."""
    if isinstance(changes, str | bytes) or not isinstance(changes, Iterable):
        raise UserError(f"expected {_PYTHON_FORMS}, got {changes!r}", field="changes")
    out = []
    for item in changes:
        if isinstance(item, Override):
            out.append(item)
            continue
        if not isinstance(item, str) or "=" not in item:
            raise UserError(f"expected {_PYTHON_FORMS}; got {item!r} in the list", field="changes")
        key_text, _, value_text = item.partition("=")
        out.append(
            Override(_key(key_text.strip(), repr(item)), parse_value(value_text.strip()), item)
        )
    return tuple(out)


def apply(data: Mapping[str, Any], overrides: Iterable[Override], file: str) -> dict[str, Any]:
    """A copy of the parsed document ``data`` with every override set, in order; tables on the
    way are created, lists are not (an element is set only where the list has one)."""
    out: dict[str, Any] = copy.deepcopy(dict(data))
    for o in overrides:
        _drop_alternative(out, o.key)
        node: Any = out
        for depth, part in enumerate(o.key):
            holder = o.prefix(depth)
            if isinstance(part, int):
                if not isinstance(node, list):
                    raise _refused(
                        o, file, f"'{holder}' is a {_kind(node)} in the campaign, not a list"
                    )
                if not _has(node, part):
                    raise _refused(o, file, f"'{holder}' has {len(node)} elements in the campaign")
            elif not isinstance(node, dict):
                raise _refused(
                    o, file, f"'{holder}' is a {_kind(node)} in the campaign, not a table"
                )
            if depth == len(o.key) - 1:
                node[part] = o.value
            elif isinstance(part, str) and part not in node:
                if isinstance(o.key[depth + 1], int):
                    raise _refused(o, file, f"the campaign has no '{o.prefix(depth + 1)}' list")
                node[part] = {}
                node = node[part]
            else:
                node = node[part]
    return out


def _drop_alternative(doc: dict[str, Any], key: Loc) -> None:
    alternative = _ALTERNATIVES.get(key)
    if alternative is None:
        return
    *tables, last = alternative
    node: Any = doc
    for part in tables:
        node = node.get(part) if isinstance(node, dict) else None
    if isinstance(node, dict):
        node.pop(last, None)


def _refused(o: Override, file: str, why: str) -> UserError:
    return UserError(f"cannot set '{o.dotted}': {why}", file=f"{file}, {o.shown}")


def _kind(value: Any) -> str:
    names = {dict: "table", list: "list", str: "string", bool: "boolean", int: "integer"}
    return names.get(type(value), "number" if isinstance(value, float) else type(value).__name__)


def blamed(
    overrides: Sequence[Override], loc: Sequence[str | int], written: Mapping[str, Any]
) -> Override | None:
    """The last override that set ``loc`` or a table holding it, or that created ``loc`` on its
    way (``--set desing.points=4`` is the source of an unknown key ``desing``); ``written`` is
    the document as the file has it. A problem at a table the file has (``scenario``) is the
    file's, even when an override changed a key inside it."""
    loc = tuple(loc)
    for o in reversed(overrides):
        if loc[: len(o.key)] == o.key:
            return o
        if loc and o.key[: len(loc)] == loc and not _present(written, loc):
            return o
    return None


def changed_inside(overrides: Sequence[Override], loc: Sequence[str | int]) -> Override | None:
    """The last override that set a key inside the table ``loc`` (a problem found at the
    table, such as a factor whose levels were set, is the file's and the option's)."""
    loc = tuple(loc)
    for o in reversed(overrides):
        if loc and len(o.key) > len(loc) and o.key[: len(loc)] == loc:
            return o
    return None


def _present(document: Any, loc: Loc) -> bool:
    node = document
    for part in loc:
        if not _has(node, part):
            return False
        node = node[part]
    return True


def _has(node: Any, part: str | int) -> bool:
    if isinstance(node, dict):
        return part in node
    return isinstance(node, list) and isinstance(part, int) and -len(node) <= part < len(node)


def annotate(text: str, overrides: Sequence[Override]) -> str:
    """The campaign's text with the overrides appended as comments that :func:`stored` reads."""
    if not overrides:
        return text
    lines = [_MARKER] + [
        f"{_ENTRY}{o.dotted} = {json.dumps(o.value, ensure_ascii=False)}" for o in overrides
    ]
    return text.rstrip("\n") + "\n\n" + "\n".join(lines) + "\n"


def stored(text: str) -> tuple[Override, ...]:
    """The overrides :func:`annotate` appended to ``text`` (none for an unchanged campaign)."""
    lines = text.splitlines()
    try:
        start = len(lines) - 1 - lines[::-1].index(_MARKER)
    except ValueError:
        return ()
    out = []
    for line in lines[start + 1 :]:
        if not line.startswith(_ENTRY):
            break
        key_text, _, value_text = line[len(_ENTRY) :].partition(" = ")
        try:
            out.append(Override(parse_path(key_text), json.loads(value_text), line))
        except ValueError:  # json.JSONDecodeError is one; a hand-edited line is skipped
            continue
    return tuple(out)

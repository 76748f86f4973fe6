"""Where a key sits in a TOML (or JSON) document: ``line_of(text, loc) -> int | None``.

``tomllib`` parses documents but forgets positions, so error messages about a field ("links[0]
.capacity_mbps: expected ...") could not name a line. This module re-reads the text with a small
scanner that records, for every key path, the 1-based line where it is written:

- ``[table]`` and ``[[array.of.tables]]`` headers (the n-th ``[[links]]`` is ``('links', n)``,
  and ``[links.queue]`` after it resolves to ``('links', n, 'queue')``);
- ``key = value`` and dotted keys ``queue.kind = "red"``;
- inline tables ``queue = { kind = "droptail", ms = 80 }`` and arrays, element by element
  (``paths = [["a"], ["b"]]``: ``('paths', 1)`` is the line where ``["b"]`` starts).

A location that is not written in the document (a missing key, say) falls back to the nearest
enclosing key or table header; ``None`` when not even that exists. Syntax is checked by
``tomllib``, not here: on text this scanner does not understand it returns what it found so far.

Locations are either tuples, as in pydantic error ``loc`` (``('links', 0, 'capacity_mbps')``),
or dotted strings as the simulator reports them (``links[0].capacity_mbps``).
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Sequence

__all__ = ["json_line_of", "line_of", "parse_path"]

Loc = tuple[str | int, ...]

_BARE_KEY = re.compile(r"[A-Za-z0-9_-]+")
_PATH_TOKEN = re.compile(r"\s*(?:\[(\d+)\]|\.?\s*([A-Za-z0-9_-]+)|\.?\s*\"((?:[^\"\\]|\\.)*)\")")


def parse_path(path: str) -> Loc:
    """Split a dotted path such as ``flows[0].paths[1][0]`` into ``('flows', 0, 'paths', 1, 0)``."""
    out: list[str | int] = []
    pos = 0
    text = path.strip()
    while pos < len(text):
        m = _PATH_TOKEN.match(text, pos)
        if m is None or m.end() == pos:
            raise ValueError(f"not a field path: {path!r}")
        index, bare, quoted = m.groups()
        if index is not None:
            out.append(int(index))
        elif bare is not None:
            out.append(bare)
        else:
            out.append(quoted)
        pos = m.end()
    return tuple(out)


def line_of(text: str, loc: Sequence[str | int] | str) -> int | None:
    """1-based line of ``loc`` in the TOML ``text``, or of its nearest written ancestor."""
    return _lookup(_Scanner(text).scan_toml(), loc)


def json_line_of(text: str, loc: Sequence[str | int] | str) -> int | None:
    """Same as :func:`line_of` for a JSON document."""
    return _lookup(_Scanner(text).scan_json(), loc)


def _lookup(index: dict[Loc, int], loc: Sequence[str | int] | str) -> int | None:
    key: Loc = parse_path(loc) if isinstance(loc, str) else tuple(loc)
    for n in range(len(key), 0, -1):
        line = index.get(key[:n])
        if line is not None:
            return line
    return None


class _Stop(Exception):
    """The scanner met text it does not understand; keep what was recorded."""


class _Scanner:
    def __init__(self, text: str) -> None:
        self.s = text
        self.i = 0
        self.n = len(text)
        self.newlines = [m.start() for m in re.finditer("\n", text)]
        self.index: dict[Loc, int] = {}

    # ---- helpers -------------------------------------------------------------------------
    def line(self, pos: int | None = None) -> int:
        return bisect.bisect_left(self.newlines, self.i if pos is None else pos) + 1

    def record(self, loc: Loc, line: int) -> None:
        self.index.setdefault(loc, line)

    def peek(self, k: int = 0) -> str:
        j = self.i + k
        return self.s[j] if j < self.n else ""

    def skip_inline_space(self) -> None:
        while self.i < self.n and self.s[self.i] in " \t\r":
            self.i += 1

    def skip_comment(self) -> None:
        if self.peek() == "#":
            end = self.s.find("\n", self.i)
            self.i = self.n if end < 0 else end

    def skip_space_and_comments(self) -> None:
        """Whitespace, newlines and comments (inside arrays, inline tables, between lines)."""
        while self.i < self.n:
            c = self.s[self.i]
            if c in " \t\r\n":
                self.i += 1
            elif c == "#":
                self.skip_comment()
            else:
                return

    def skip_to_next_line(self) -> None:
        end = self.s.find("\n", self.i)
        self.i = self.n if end < 0 else end + 1

    # ---- strings and keys ----------------------------------------------------------------
    def string(self) -> str:
        """Parse a basic, literal or multi-line string starting at the cursor; return its text
        (escapes kept raw: keys with escapes are rare and only matched loosely)."""
        q = self.peek()
        if self.s.startswith(q * 3, self.i):
            start = self.i + 3
            j = start
            while True:
                k = self.s.find(q * 3, j)
                if k < 0:
                    raise _Stop
                # A backslash escapes the next character in basic strings.
                if q == '"' and _escaped(self.s, k, start):
                    j = k + 1
                    continue
                end = k + 3
                extra = 0
                while extra < 2 and end < self.n and self.s[end] == q:
                    end += 1
                    extra += 1
                self.i = end
                return self.s[start : k + extra]
        start = self.i + 1
        j = start
        while j < self.n:
            c = self.s[j]
            if c == "\\" and q == '"':
                j += 2
                continue
            if c == q:
                self.i = j + 1
                return self.s[start:j]
            if c == "\n":
                raise _Stop
            j += 1
        raise _Stop

    def key(self) -> list[str]:
        """A possibly dotted key: ``a``, ``"a b"``, ``a . b . 'c'``."""
        parts: list[str] = []
        while True:
            self.skip_inline_space()
            c = self.peek()
            if c in "\"'":
                parts.append(self.string())
            else:
                m = _BARE_KEY.match(self.s, self.i)
                if m is None:
                    raise _Stop
                parts.append(m.group())
                self.i = m.end()
            self.skip_inline_space()
            if self.peek() != ".":
                return parts
            self.i += 1

    # ---- values --------------------------------------------------------------------------
    def value(self, loc: Loc) -> None:
        c = self.peek()
        if c == "[":
            self.array(loc)
        elif c == "{":
            self.inline_table(loc)
        elif c in "\"'":
            self.string()
        else:
            start = self.i
            while self.i < self.n and self.s[self.i] not in ",]}#\n":
                self.i += 1
            if self.i == start:
                raise _Stop

    def array(self, loc: Loc) -> None:
        self.i += 1
        k = 0
        while True:
            self.skip_space_and_comments()
            if self.peek() == "]":
                self.i += 1
                return
            if not self.peek():
                raise _Stop
            self.record((*loc, k), self.line())
            self.value((*loc, k))
            k += 1
            self.skip_space_and_comments()
            if self.peek() == ",":
                self.i += 1
            elif self.peek() != "]":
                raise _Stop

    def inline_table(self, loc: Loc) -> None:
        self.i += 1
        while True:
            self.skip_space_and_comments()
            if self.peek() == "}":
                self.i += 1
                return
            if not self.peek():
                raise _Stop
            line = self.line()
            parts = self.key()
            for k in range(1, len(parts) + 1):
                self.record((*loc, *parts[:k]), line)
            self.skip_inline_space()
            if self.peek() not in "=:" or not self.peek():
                raise _Stop
            self.i += 1
            self.skip_space_and_comments()
            self.value((*loc, *parts))
            self.skip_space_and_comments()
            if self.peek() == ",":
                self.i += 1
            elif self.peek() != "}":
                raise _Stop

    # ---- documents -----------------------------------------------------------------------
    def scan_json(self) -> dict[Loc, int]:
        try:
            self.skip_space_and_comments()
            self.value(())
        except (_Stop, IndexError):
            pass
        return self.index

    def scan_toml(self) -> dict[Loc, int]:
        current: Loc = ()
        # Resolved path of each array of tables -> how many elements have been opened so far.
        aot: dict[Loc, int] = {}

        def resolve(parts: Sequence[str]) -> Loc:
            out: Loc = ()
            for p in parts:
                out = (*out, p)
                if out in aot:
                    out = (*out, aot[out] - 1)
            return out

        while True:
            self.skip_space_and_comments()
            if self.i >= self.n:
                return self.index
            start = self.i
            line = self.line()
            try:
                if self.peek() == "[":
                    double = self.peek(1) == "["
                    self.i += 2 if double else 1
                    parts = self.key()
                    closing = "]]" if double else "]"
                    if not self.s.startswith(closing, self.i):
                        raise _Stop
                    self.i += len(closing)
                    if double:
                        table = (*resolve(parts[:-1]), parts[-1])
                        k = aot.get(table, 0)
                        aot[table] = k + 1
                        self.record(table, line)
                        current = (*table, k)
                    else:
                        current = resolve(parts)
                    for depth in range(1, len(current) + 1):
                        self.record(current[:depth], line)
                else:
                    parts = self.key()
                    for k in range(1, len(parts) + 1):
                        self.record((*current, *parts[:k]), line)
                    self.skip_inline_space()
                    if self.peek() != "=":
                        raise _Stop
                    self.i += 1
                    self.skip_inline_space()
                    self.value((*current, *parts))
                self.skip_inline_space()
                self.skip_comment()
            except (_Stop, IndexError):
                self.i = max(self.i, start)
                self.skip_to_next_line()
            if self.i == start:
                self.skip_to_next_line()


def _escaped(s: str, pos: int, start: int) -> bool:
    """Whether the character at ``pos`` is preceded by an odd number of backslashes."""
    count = 0
    j = pos - 1
    while j >= start and s[j] == "\\":
        count += 1
        j -= 1
    return count % 2 == 1

"""Reading scenario documents (TOML or JSON) into :class:`Scenario`, with errors that name the file,
the line, the field and what was expected — as a :class:`UserError`, never a traceback."""

from __future__ import annotations

import json
import os
import re
import tomllib
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ValidationError

from mptcplab.document_kind import CAMPAIGN_KEYS, looks_like_campaign, written_keys
from mptcplab.errors import SHOWN_PROBLEMS, UserError
from mptcplab.scenario.model import Issue, Scenario, issues
from mptcplab.tomlloc import json_line_of, line_of, parse_path

__all__ = [
    "document_error",
    "field_line",
    "load_document",
    "load_scenario",
    "parse_document",
    "resolve_scenario",
    "scenario_from_data",
    "validation_error",
    "with_overrides",
]

_TOML_POSITION = re.compile(r"\s*\(at line (\d+), column (\d+)\)\s*$")
_TOML_END = re.compile(r"\s*\(at end of document\)\s*$")


def _syntax(path: str | os.PathLike[str]) -> str:
    if Path(path).is_dir():  # before the suffix: "campaigns" has none, "x.toml/" has one
        raise UserError("expected a .toml or .json file, got a directory", file=str(path))
    suffix = Path(path).suffix.lower()
    if suffix == ".toml":
        return "toml"
    if suffix == ".json":
        return "json"
    raise UserError(
        f"expected a .toml or .json file, got '{suffix or 'no extension'}'", file=str(path)
    )


def parse_document(text: str, *, syntax: str, file: str | None = None) -> dict[str, Any]:
    """Parse TOML or JSON text into plain data; syntax errors become :class:`UserError` with the
    line (and column) where the parser stopped."""
    if syntax == "toml":
        try:
            data: Any = tomllib.loads(text)
        except tomllib.TOMLDecodeError as exc:
            msg = str(exc)
            line: int | None = None
            m = _TOML_POSITION.search(msg)
            if m:
                line = int(m.group(1))
                msg = f"{msg[: m.start()]} (column {m.group(2)})"
            elif _TOML_END.search(msg):
                line = text.count("\n") + 1
                msg = _TOML_END.sub(" (at end of document)", msg)
            raise UserError(f"invalid TOML: {msg}", file=file, line=line) from None
    elif syntax == "json":
        try:
            data = json.loads(text, object_pairs_hook=_unique_keys)
        except _DuplicateKey as dup:
            raise UserError(
                f"key '{dup.key}' is given twice in one object (TOML refuses this too; "
                "JSON readers would keep one of the two silently)",
                file=file,
                line=_second_key_line(text, dup.key),
            ) from None
        except json.JSONDecodeError as exc:
            raise UserError(
                f"invalid JSON: {exc.msg} (column {exc.colno})", file=file, line=exc.lineno
            ) from None
        except RecursionError:
            raise UserError("invalid JSON: nested too deeply", file=file) from None
    else:
        raise ValueError(f"unknown syntax {syntax!r}")
    if not isinstance(data, dict):
        raise UserError("expected a table of scenario fields at the top level", file=file, line=1)
    return data


class _DuplicateKey(Exception):
    def __init__(self, key: str) -> None:
        self.key = key


def _unique_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, value in pairs:
        if key in out:
            raise _DuplicateKey(key)
        out[key] = value
    return out


def _second_key_line(text: str, key: str) -> int | None:
    """Line of the second ``"key":`` when the text has exactly two (the parser keeps no
    positions; with more, other objects hold the key too and the line would be a guess)."""
    found = list(re.finditer(rf'"{re.escape(json.dumps(key)[1:-1])}"\s*:', text))
    return text.count("\n", 0, found[1].start()) + 1 if len(found) == 2 else None


def load_document(path: str | os.PathLike[str]) -> tuple[dict[str, Any], str, str]:
    """Read and parse a TOML/JSON file: ``(data, text, syntax)``."""
    syntax = _syntax(path)
    try:
        text = Path(path).read_text(encoding="utf-8-sig")  # a BOM is not TOML
    except FileNotFoundError:
        raise UserError("no such file", file=str(path)) from None
    except IsADirectoryError:
        raise UserError("expected a file, got a directory", file=str(path)) from None
    except UnicodeDecodeError as exc:
        raise UserError(f"not UTF-8 text ({exc.reason})", file=str(path)) from None
    except OSError as exc:
        raise UserError(f"cannot read: {exc.strerror}", file=str(path)) from None
    return parse_document(text, syntax=syntax, file=str(path)), text, syntax


def document_error(
    issue: Issue,
    *,
    file: str | None = None,
    text: str | None = None,
    syntax: str = "toml",
    prefix: tuple[str | int, ...] = (),
) -> UserError:
    """A :class:`UserError` for ``issue``; with the document ``text`` it gets a line number.

    ``prefix`` is where the scenario sits inside a larger document (a campaign file, say).
    """
    loc = (*prefix, *issue.loc)
    line = None
    if text is not None:
        line = line_of(text, loc) if syntax == "toml" else json_line_of(text, loc)
    field = Issue(loc, "").field or None
    return UserError(issue.message, file=file, line=line, field=field)


def validation_error(
    exc: ValidationError,
    *,
    file: str | None = None,
    text: str | None = None,
    syntax: str = "toml",
    root: type[BaseModel] = Scenario,
    prefix: tuple[str | int, ...] = (),
) -> UserError:
    """Every problem of a pydantic error as one :class:`UserError` (see
    :meth:`UserError.several`)."""
    found = issues(exc, root)
    return UserError.several(
        [
            document_error(i, file=file, text=text, syntax=syntax, prefix=prefix)
            for i in found[:SHOWN_PROBLEMS]
        ],
        total=len(found),
    )


def scenario_from_data(
    data: Any,
    *,
    file: str | None = None,
    text: str | None = None,
    syntax: str = "toml",
) -> Scenario:
    """Validate plain data as a scenario; problems become :class:`UserError`."""
    if not isinstance(data, dict):
        raise UserError("expected a table of scenario fields", file=file)
    if file is not None and looks_like_campaign(data):
        raise UserError(
            "this is a campaign file, not a scenario: it has "
            f"{written_keys(data, CAMPAIGN_KEYS)}, but no [[links]] or [[flows]]; "
            f"run it with mptcplab run {file}",
            file=file,
        )
    try:
        return Scenario.model_validate(data)
    except ValidationError as exc:
        raise validation_error(exc, file=file, text=text, syntax=syntax) from None


def resolve_scenario(
    scenario: Scenario | dict[str, Any] | str | os.PathLike[str],
) -> tuple[Scenario, str | None, str | None, str]:
    """A scenario given as a model, plain data or a file's path: the model, and the file, text
    and syntax it came from (``None`` for the first two when not from a file), so that a later
    problem with one of its fields can name the line."""
    if isinstance(scenario, Scenario):
        return scenario, None, None, "json"
    if isinstance(scenario, dict):
        return scenario_from_data(scenario, syntax="json"), None, None, "json"
    if isinstance(scenario, str | os.PathLike):
        data, text, syntax = load_document(scenario)
        file = str(scenario)
        return scenario_from_data(data, file=file, text=text, syntax=syntax), file, text, syntax
    raise TypeError(f"expected a Scenario, a dict or a path, got {type(scenario).__name__}")


def field_line(field: str, text: str | None, syntax: str) -> int | None:
    """Line of the dotted ``field`` ("flows[0].scheduler") in a document's ``text``, or of its
    nearest written parent; ``None`` without a text or for a field that is not a path."""
    if text is None:
        return None
    try:
        loc = parse_path(field)
    except ValueError:
        return None
    return line_of(text, loc) if syntax == "toml" else json_line_of(text, loc)


def _merged(written: Any, changed: Any) -> Any:
    """Two dumps of one model's current values, each leaving out other fields: every key of
    either, lists element by element."""
    if isinstance(written, dict) and isinstance(changed, dict):
        return {
            key: _merged(written[key], changed[key])
            if key in written and key in changed
            else written.get(key, changed.get(key))
            for key in {**written, **changed}
        }
    if isinstance(written, list) and isinstance(changed, list) and len(written) == len(changed):
        return [_merged(a, b) for a, b in zip(written, changed, strict=True)]
    return written


def set_fields(model: Scenario) -> dict[str, Any]:
    """``model``'s fields that were given (a file's, or set by assignment) or differ from
    their defaults, as plain data. A default list or table changed in place (``trace.append``,
    ``flows[0].tcp.initial_window = 2``) is not marked as set, and left out by
    ``exclude_unset`` alone; a value given equal to its default is left out by
    ``exclude_defaults`` alone."""
    # warnings=False: a value assigned with the wrong type is for the validation to name.
    written = model.model_dump(mode="json", exclude_unset=True, warnings=False)
    changed = model.model_dump(mode="json", exclude_defaults=True, warnings=False)
    return _merged(written, changed)  # type: ignore[no-any-return]


def recheck(model: Scenario) -> UserError | None:
    """The model's own refusal of ``model`` as it is now, naming the field, or None: a model
    changed by assignment after it was made is not validated again until here."""
    try:
        Scenario.model_validate(set_fields(model))
    except ValidationError as exc:
        return validation_error(exc, syntax="json")
    return None


def with_overrides(
    model: Scenario,
    *,
    seed: int | None = None,
    duration_s: float | None = None,
    trace: Sequence[str] | None = None,
) -> Scenario:
    """``model`` with the values a caller gives in place of the file's (``--seed``,
    ``--duration``, ``--trace``), validated again; errors name no file, since the values are not
    in one."""
    changes: dict[str, Any] = {}
    if seed is not None:
        changes["seed"] = seed
    if duration_s is not None:
        # A value of the wrong type is left to the model's check, which names the field.
        is_number = isinstance(duration_s, int | float) and not isinstance(duration_s, bool)
        if (
            is_number and 0 < duration_s <= model.warmup_s
        ):  # name what was given, not the file's warmup_s
            raise UserError(
                f"expected a duration longer than the scenario's warm-up, "
                f"warmup_s = {model.warmup_s:g} s; got {duration_s:g}",
                field="duration_s",
            )
        changes["duration_s"] = duration_s
    if trace is not None:
        if isinstance(trace, str):
            # list("cwnd") would be four unknown trace kinds, one per letter.
            raise UserError(
                f"expected a list of trace kinds such as ['{trace}'], got '{trace}'", field="trace"
            )
        changes["trace"] = list(trace)
    if not changes:
        return model
    # Only what the file set, so that the model still tells a file's value from a default
    # (the emulator refuses a setting the kernel lacks but notes a default it does not model).
    return scenario_from_data({**set_fields(model), **changes})


def load_scenario(path: str | os.PathLike[str]) -> Scenario:
    """Load a ``.toml`` or ``.json`` scenario file.

    Raises :class:`UserError` naming the file, the line, the field and what was expected.
    """
    data, text, syntax = load_document(path)
    return scenario_from_data(data, file=str(path), text=text, syntax=syntax)

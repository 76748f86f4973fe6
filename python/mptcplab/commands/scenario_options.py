"""Options shared by the commands that run one scenario (``mptcplab sim``, ``mptcplab emu``)."""

from __future__ import annotations

import math
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, get_args

import typer

from mptcplab.commands.path_value import path_value
from mptcplab.errors import UserError
from mptcplab.outputs import writing
from mptcplab.scenario.number_text import number_text
from mptcplab.scenario.vocabulary import MAX_DURATION_S, MIN_DURATION_S, TraceKind

if TYPE_CHECKING:
    from mptcplab.scenario.model import Scenario

ScenarioArgument = Annotated[
    Path, typer.Argument(metavar="FILE", help="Scenario file (.toml or .json).", parser=path_value)
]
JsonFlag = Annotated[
    bool, typer.Option("--json", help="Print the report as JSON instead of tables.")
]
SeedOption = Annotated[
    int | None, typer.Option("--seed", min=0, help="Replace the scenario's seed.")
]


def _positive_duration(value: float | None) -> float | None:
    if value is not None and not (math.isfinite(value) and value > 0):
        raise UserError(
            f"expected a duration in seconds > 0, got {number_text(value)}", field="--duration"
        )
    if value is not None and value < MIN_DURATION_S:
        raise UserError(
            f"expected a duration of at least {number_text(MIN_DURATION_S)} s, "
            f"got {number_text(value)}",
            field="--duration",
        )
    if value is not None and value > MAX_DURATION_S:
        raise UserError(
            f"expected a duration of at most {number_text(MAX_DURATION_S)} s (the clock counts "
            f"nanoseconds in 64 bits), got {number_text(value)}",
            field="--duration",
        )
    return value


DurationOption = Annotated[
    float | None,
    typer.Option(
        "--duration",
        help="Replace the scenario's duration_s (seconds).",
        callback=_positive_duration,
    ),
]
TraceOption = Annotated[
    str | None,
    typer.Option(
        "--trace", help=f"Record traces: comma-separated {','.join(get_args(TraceKind))}."
    ),
]
FieldOption = Annotated[
    list[str] | None,
    typer.Option(
        "--set",
        metavar="PATH=VALUE",
        help="Set a field of the scenario for this run, e.g. --set links\\[wifi].loss=0.01 "
        "--set flows[0].cc=olia (repeatable; an element of links or flows by position or id; "
        "VALUE is read as TOML, a bare word as text).",
    ),
]
OutputOption = Annotated[
    Path | None,
    typer.Option("-o", "--output", help="Also write the report JSON here.", parser=path_value),
]

TRACE_KINDS: tuple[str, ...] = get_args(TraceKind)


def parse_trace(value: str | None) -> list[str] | None:
    """``--trace cwnd,queue`` as a list; None when not given."""
    if value is None:
        return None
    names = [v.strip() for v in value.split(",") if v.strip()]
    for name in names:
        if name not in TRACE_KINDS:
            raise UserError(
                f"unknown trace {name!r}; expected a comma-separated list of "
                f"{', '.join(TRACE_KINDS)}",
                field="--trace",
            )
    return names


def blame_options(
    exc: UserError,
    file: Path,
    *,
    duration: float | None,
    seed: int | None,
    traces: list[str] | None,
) -> UserError:
    """A problem the scenario's check found once ``--duration``, ``--seed`` or ``--trace``
    replaced the file's values (such a problem names no file): on the option when it is the
    option's own value, else on the file's field, located, with the options that made it a
    problem."""
    given = {
        "--duration": None if duration is None else number_text(duration),
        "--seed": None if seed is None else str(seed),
        "--trace": None if traces is None else ",".join(traces),
    }
    given = {option: value for option, value in given.items() if value is not None}
    if exc.file is not None or not given:
        return exc
    own = {"duration_s": "--duration", "seed": "--seed", "trace": "--trace"}.get(exc.field or "")
    if own in given:
        return UserError(exc.detail, field=own)
    from mptcplab.scenario.load import field_line, load_document

    line = None
    if exc.field is not None:
        _, text, syntax = load_document(file)
        line = field_line(exc.field, text, syntax)
    shown = ", ".join(f"{option} {value}" for option, value in given.items())
    return UserError(f"{exc.detail} (with {shown})", file=str(file), line=line, field=exc.field)


def write_report(text: str, output: Path | None) -> None:
    """The report JSON into ``-o FILE`` when given; a file that cannot be written is a
    :class:`UserError` naming it."""
    if output is None:
        return
    with writing(output, "the report"):
        output.write_text(text + "\n", encoding="utf-8")


def with_fields(file: Path, changes: list[str] | None) -> Path | Scenario:
    """The scenario file with the ``--set PATH=VALUE`` options applied, or the file itself when
    there are none. A path that does not resolve, or a value its field refuses, is blamed on
    the option; a problem in the file itself on the file."""
    from mptcplab.campaign.overrides import parse_value
    from mptcplab.scenario.field_paths import ScenarioFile

    if not changes:
        return file
    base = ScenarioFile(file)
    values: dict[str, Any] = {}
    options: dict[str, str] = {}  # resolved path -> the option that set it
    for raw in changes:
        path, sep, value = raw.partition("=")
        if not sep:
            raise UserError(
                f"expected PATH=VALUE (e.g. --set links[0].loss=0.01), got '{raw}'", field="--set"
            )
        try:
            resolved = base.resolve(path.strip())
        except UserError as exc:
            raise UserError(exc.detail, field=f"--set {raw}") from None
        values[resolved] = parse_value(value.strip())
        options[resolved] = raw
    try:
        return base(**values)
    except UserError as exc:
        shown = options.get(exc.field or "")
        if shown is not None:
            raise UserError(exc.detail, field=f"--set {shown}") from None
        # Another field, made invalid by a set one (duration_s below warmup_s, say).
        raise UserError(
            f"{exc.detail} (with {', '.join(f'--set {o}' for o in options.values())})",
            file=str(file),
            field=exc.field,
        ) from None

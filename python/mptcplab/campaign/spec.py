"""Campaign files: the TOML schema, its validation, and where a bad key sits in the file.

A campaign file reads like this (campaigns/quickstart.toml is a complete, commented example)::

    name = "quickstart"            # also the default output folder, results/<name>/
    seed = 2013                    # every run's seed derives from it
    replications = 3
    backend = "sim"                # or backends = ["sim", "emu"]: every run on each backend
    metrics = ["aggregation_benefit", "goodput_mbps"]
    reference_runs = false         # true: also run single-path TCP on each path of each point

    [design]
    kind = "wsp"                   # wsp | lhs | sobol | factorial | random
    points = 50
    designs = 1                    # k > 1: k independent designs, for sensitivity analysis

    [scenario]
    template = "two_path"          # mptcplab.scenario templates
    duration_s = 20.0              # every other key is a fixed template parameter

    [factors.capacity1_mbps]       # a quantitative factor: low, high, optional log / kind
    low = 0.1
    high = 100.0
    log = true
    param = "capacity_mbps[0]"     # the template parameter it sets (element 0 of a list)

    [factors.cc]                   # a qualitative factor: one variant per level
    levels = ["lia", "olia"]       # each level is the value of `param` (default: the name)

    [factors.buffer.levels]        # levels as tables: each sets several template parameters
    auto = { rcvbuf = "auto" }
    fixed = { rcvbuf = 4194304 }

    [[published]]                  # a paper's figure, set beside ours in the report
    source = "draft-khalili-mptcp-performance-issues-06, Scenario C"
    label = "single-path users, LIA"           # optional
    metric = "user_goodput_mbps.singlepath"    # any metric; flow-entry ones name the entry
    at = { cc = "lia" }            # factor settings it was measured at (levels, or values)
    value = 0.68
    tolerance = 0.05               # optional: |ours - value| that counts as agreement
    # relative_to = { cc = "olia" }  # optional: the value is then a ratio, the metric at `at`
                                   # over the metric at these settings (the rest of `at` kept)

Instead of a template, ``[scenario]`` may name a scenario file, ``file = "net.toml"`` (relative
to the campaign file): factors and the other keys of ``[scenario]`` then set fields of that
file's scenario by path, ``param = "links[wifi].capacity_mbps"`` (see
:mod:`mptcplab.scenario.field_paths`).

Mapping of factors to template parameters: ``param = "name"`` sets the template parameter
``name``; ``param = "name[i]"`` sets element ``i`` of the list parameter ``name`` (the rest of
the list comes from other factors, or from the fixed parameter of that name, or else from the
template's default list: a factor over one path's capacity leaves the other path's as the
template has it). Without ``param`` the factor's own name is the parameter. Qualitative factors
are crossed with the space-filling design: every combination of levels (a *variant*) sees the
same points.

Cross-validation: ``backends = ["sim", "emu"]`` (instead of ``backend``) runs every point,
variant and replication on each listed backend with the same scenario and seed; the backend
then acts as one more qualitative factor, ``backend``, in the stored variants and the report.

Published figures: each ``[[published]]`` entry must name factors the campaign has, levels they
have, values inside their domains, and settings at which the plan has runs; the report sets the
median of those runs beside the figure (:mod:`mptcplab.analysis.published`).

The store goes to ``output = "path/store.sqlite"``, by default ``results/<name>/store.sqlite``. A
relative path starts at the folder the command runs in, as ``-o`` does (``make run`` and the
shipped campaigns rely on it), unlike ``scenario.file``, which starts at the campaign file's
folder; ``~`` is the home folder.

Validation failures raise :class:`mptcplab.errors.UserError` naming the file, the line, the key
and the expected form; a misspelt key gets the closest known key as a suggestion.

Keys can also be set when the file is loaded (``load(path, {"backend": "emu"})``, ``mptcplab
run FILE --set backend=emu``; :mod:`mptcplab.campaign.overrides`): the changed document is
validated like a written one, and a problem in a changed key names the option that set it.
"""

from __future__ import annotations

import difflib
import re
import tomllib
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from mptcplab.analysis.metrics import (
    FLOW_PLACEHOLDER,
    REFERENCE_METRICS,
    all_metric_names,
    flow_metric,
    is_metric_name,
)
from mptcplab.analysis.published import same_setting
from mptcplab.campaign.overrides import (
    Override,
    annotate,
    apply,
    blamed,
    changed_inside,
    from_mapping,
    from_sequence,
)
from mptcplab.campaign.store import RUN_COLUMNS
from mptcplab.design.factors import POINT_INDEX, Factor
from mptcplab.document_kind import SCENARIO_KEYS, looks_like_scenario, written_keys
from mptcplab.errors import SHOWN_PROBLEMS, UserError
from mptcplab.scenario.field_paths import ScenarioFile

# A template parameter or scenario field `seed` set in [scenario] or by a factor.
_SEED_IS_DERIVED = (
    "each run's seed derives from the campaign's `seed`, the point and the replication; "
    "remove this one"
)

#: Name of the qualitative level that `backends = [...]` adds to every run's variant.
BACKEND_LEVEL = "backend"
#: Names a factor cannot take: the columns the runs table gives each run beside its factors,
#: which a factor's values would overwrite there, and the design's point numbers, which a
#: factor's values would replace.
RESERVED_FACTOR_NAMES = frozenset({*RUN_COLUMNS, POINT_INDEX})
DESIGN_KINDS = ("wsp", "lhs", "sobol", "factorial", "random")
_PARAM_TARGET = re.compile(r"^([A-Za-z_][A-Za-z0-9_]*)(?:\[(\d+)\])?$")
_NAME = r"^[A-Za-z0-9][A-Za-z0-9_.-]*$"

Loc = tuple[str | int, ...]


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)


class DesignSpec(_Strict):
    kind: Literal["wsp", "lhs", "sobol", "factorial", "random"] = "wsp"
    # Required by every kind but factorial, whose size follows from its levels.
    points: int | None = Field(default=None, ge=1)
    designs: int = Field(default=1, ge=1)
    # Passed to mptcplab.design.generate as keyword arguments (e.g. candidates for wsp).
    options: dict[str, Any] = Field(default_factory=dict)


class FactorSpec(_Strict):
    kind: Literal["continuous", "integer", "categorical"] | None = None
    low: float | None = None
    high: float | None = None
    log: bool = False
    levels: list[str | int | float | bool] | dict[str, dict[str, Any]] | None = None
    param: str | None = None
    description: str = ""


class ScenarioSpec(BaseModel):
    # Either a template or a scenario file (mptcplab.scenario.field_paths). Every other key is
    # fixed: a template parameter, or a field path of the file's scenario.
    model_config = ConfigDict(extra="allow", strict=True)
    template: str | None = None
    file: str | None = None


class PublishedSpec(_Strict):
    """A published figure set beside the campaign's own (the report's "Published results")."""

    source: str = Field(min_length=1)
    metric: str
    value: float = Field(allow_inf_nan=False)
    # Factor name -> level (qualitative) or value (quantitative): the runs the figure is about.
    at: dict[str, str | int | float | bool] = Field(default_factory=dict)
    label: str = ""
    # A ratio instead of a value: the metric at `at` divided by the metric at `at` with these
    # settings in place of its own (e.g. a goodput under MPTCP relative to single-path), for
    # figures whose units differ from ours or that the paper states as a change.
    relative_to: dict[str, str | int | float | bool] = Field(default_factory=dict)
    # Largest |ours − published| counted as agreement, in the metric's unit (or the ratio's).
    tolerance: float | None = Field(default=None, ge=0, allow_inf_nan=False)


class CampaignSpec(_Strict):
    name: str = Field(pattern=_NAME)
    description: str = ""
    seed: int = Field(ge=0)
    backend: str = "sim"
    # Cross-validation: the same runs on each of these backends (excludes `backend`).
    backends: list[str] | None = None
    replications: int = Field(default=1, ge=1)
    metrics: list[str] = Field(default_factory=lambda: ["goodput_mbps"], min_length=1)
    reference_runs: bool = False
    reference_cc: Literal["reno", "cubic"] = "reno"
    output: str | None = None
    design: DesignSpec = Field(default_factory=DesignSpec)
    scenario: ScenarioSpec
    factors: dict[str, FactorSpec] = Field(default_factory=dict)
    published: list[PublishedSpec] = Field(default_factory=list)


@dataclass(frozen=True)
class Target:
    """A template parameter, or one element of a list parameter, that a factor sets."""

    param: str
    index: int | None = None

    def __str__(self) -> str:
        return self.param if self.index is None else f"{self.param}[{self.index}]"


@dataclass(frozen=True)
class QualitativeFactor:
    """A qualitative factor: level name -> template assignments made by that level."""

    name: str
    levels: dict[str, dict[Target, Any]]


@dataclass(frozen=True)
class Campaign:
    """A validated campaign, ready to be planned (see :mod:`mptcplab.campaign.plan`)."""

    spec: CampaignSpec
    path: Path
    text: str
    quantitative: tuple[Factor, ...]
    targets: dict[str, Target]  # quantitative factor name -> the parameter it sets
    qualitative: tuple[QualitativeFactor, ...]
    owners: dict[Target, str]  # template parameter (element) -> the factor that sets it
    fixed: dict[str, Any]
    template: Callable[..., Any] = field(repr=False)
    # Keys set when the campaign was loaded rather than written in its file (`--set`).
    overrides: tuple[Override, ...] = ()
    # With a scenario file: its fixed keys as [scenario] writes them, by the resolved path.
    fixed_written: dict[str, str] = field(default_factory=dict)
    # The template's defaults of the list parameters that factors index and [scenario] does
    # not give: the elements no factor sets keep them.
    list_defaults: dict[str, list[Any]] = field(default_factory=dict)

    @property
    def scenario_file(self) -> Path | None:
        """The scenario file the campaign names instead of a template, if it does."""
        return self.template.path if isinstance(self.template, ScenarioFile) else None

    @property
    def scenario_source(self) -> str:
        """Where each run's scenario comes from, for messages: ``template 'two_path'`` or
        ``scenario file scenarios/net.toml``."""
        if self.scenario_file is not None:
            return f"scenario file {self.scenario_file}"
        return f"template '{self.spec.scenario.template}'"

    @property
    def name(self) -> str:
        return self.spec.name

    @property
    def backend_names(self) -> tuple[str, ...]:
        """The backends every run goes to: ``backends`` when given, else ``backend``."""
        if self.spec.backends is not None:
            return tuple(self.spec.backends)
        return (self.spec.backend,)

    @property
    def cross_validation(self) -> bool:
        """True when ``backends`` is given: the backend is part of each run's variant."""
        return self.spec.backends is not None

    @property
    def output(self) -> Path:
        """The store: ``output``, else ``results/<name>/store.sqlite``. A relative path starts
        at the current folder, where ``make run`` and the commands' ``-o`` put stores (a
        campaign's ``scenario.file`` starts at the campaign's folder instead); ``~`` is the home
        folder."""
        if self.spec.output is None:
            return Path("results") / self.spec.name / "store.sqlite"
        try:
            return Path(self.spec.output).expanduser()
        except RuntimeError as exc:  # no home folder to expand ~ to
            raise UserError(f"cannot expand '~' here ({exc})", **self.where("output")) from None

    @property
    def stored_text(self) -> str:
        """The file's text with the keys set on loading appended as comments (the store's
        provenance, which the report reads back), then the scenario file's text, if the
        campaign names one, as comments too: the store and the report say what ran even after
        that file changes."""
        text = annotate(self.text, self.overrides)
        if not isinstance(self.template, ScenarioFile):
            return text
        commented = [f"# {line}".rstrip() for line in self.template.text.splitlines()]
        header = f"# ---- scenario file {self.template.path} as the runs used it ----"
        return text.rstrip("\n") + "\n\n" + "\n".join([header, *commented]) + "\n"

    def where(self, *loc: str | int) -> dict[str, Any]:
        """File, line and dotted key of ``loc``, ready for :class:`UserError`."""
        return _where(self.path, self.text, self.overrides, loc)


# --- locating keys ------------------------------------------------------------------------------


def _dotted(loc: Sequence[str | int]) -> str:
    out = ""
    for part in loc:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out


def _line(text: str, loc: Sequence[str | int]) -> int | None:
    """Line of ``loc`` in the file, or of its nearest written parent (a missing key)."""
    from mptcplab.tomlloc import line_of

    return line_of(text, tuple(loc))


def _where(
    path: Path,
    text: str,
    overrides: Sequence[Override],
    loc: Sequence[str | int],
    line_loc: Sequence[str | int] | None = None,
) -> dict[str, Any]:
    """``UserError`` keywords for a problem at ``loc``: the file and the line of ``line_loc``
    (default ``loc``), or the option that set the key when it was set on loading."""
    source = blamed(overrides, loc, tomllib.loads(text)) if overrides else None
    if source is not None:
        return {"file": f"{path}, {source.shown}", "line": None, "field": _dotted(loc)}
    line = _line(text, loc if line_loc is None else line_loc)
    field = _dotted(loc)
    inside = changed_inside(overrides, loc)
    if inside is not None:
        field += f" (changed by {inside.shown})"
    return {"file": str(path), "line": line, "field": field}


def _suggest(word: str, known: Sequence[str]) -> str:
    close = difflib.get_close_matches(word, list(known), n=1, cutoff=0.6)
    return f"; did you mean '{close[0]}'?" if close else f"; expected one of: {', '.join(known)}"


# --- pydantic errors to one message -------------------------------------------------------------


def _model_at(loc: Loc) -> type[BaseModel] | None:
    """The schema model that owns the key at ``loc`` (for listing the keys it accepts)."""
    model: type[BaseModel] = CampaignSpec
    i = 0
    while i < len(loc) - 1:
        part = loc[i]
        if model is CampaignSpec and part == "design":
            model = DesignSpec
        elif model is CampaignSpec and part == "factors" and i + 1 < len(loc) - 1:
            model, i = FactorSpec, i + 1
        elif model is CampaignSpec and part == "scenario":
            model = ScenarioSpec
        elif model is CampaignSpec and part == "published" and i + 1 < len(loc) - 1:
            model, i = PublishedSpec, i + 1
        else:
            return None
        i += 1
    return model


_EXPECTED = {
    "int_type": "an integer",
    "float_type": "a number",
    "string_type": "a string (in quotes)",
    "bool_type": "true or false",
    "list_type": "a list, [ ... ]",
    "dict_type": "a table",
    "model_type": "a table",
}


def _describe(error: Mapping[str, Any]) -> str:
    kind = error["type"]
    got = error.get("input")
    ctx = error.get("ctx") or {}
    if kind in _EXPECTED:
        expected = error.get("expected", [_EXPECTED[kind]])
        alternatives = (
            ", ".join(expected[:-1]) + " or " + expected[-1] if len(expected) > 1 else expected[0]
        )
        return f"expected {alternatives}, got {got!r}"
    if kind == "string_too_short":
        return f"expected a non-empty string, got {got!r}"
    if kind == "finite_number":
        return f"expected a finite number, got {got!r}"
    if kind == "literal_error":
        return f"expected one of {ctx.get('expected')}, got {got!r}"
    if kind in ("greater_than_equal", "greater_than"):
        op = "≥" if kind == "greater_than_equal" else ">"
        bound = ctx.get("ge", ctx.get("gt"))
        return f"expected a value {op} {bound}, got {got!r}"
    if kind == "string_pattern_mismatch":
        return (
            f"expected a name of letters, digits, '_', '-' or '.', starting with a letter or "
            f"digit, got {got!r}"
        )
    if kind == "too_short":
        return "expected at least one entry"
    return f"{error['msg']}, got {got!r}"


def _data_loc(data: Any, loc: Loc, missing: bool) -> Loc:
    """``loc`` reduced to the keys the TOML data has: pydantic adds the name of a union's
    alternative to the location of errors in unions; a missing key is kept as the last part."""
    out: list[str | int] = []
    node = data
    for i, part in enumerate(loc):
        in_table = isinstance(node, dict) and part in node
        in_list = isinstance(node, list) and isinstance(part, int) and part < len(node)
        if in_table or in_list:
            node = node[part]
        elif missing and i == len(loc) - 1:
            pass
        else:
            continue
        out.append(part)
    return tuple(out)


def _error_from_validation(
    exc: ValidationError,
    data: Mapping[str, Any],
    path: Path,
    text: str,
    overrides: Sequence[Override] = (),
) -> UserError:
    """Every problem of the campaign file, each at its line (see :meth:`UserError.several`)."""
    errors = exc.errors()
    # The key a typo was meant to be is named by the typo's message, not reported missing too.
    meant = {
        (*_data_loc(data, tuple(e["loc"]), False)[:-1], close)
        for e in errors
        if e["type"] == "extra_forbidden"
        and (close := _meant(_data_loc(data, tuple(e["loc"]), False)))
    }
    kept = [
        e
        for e in errors
        if not (e["type"] == "missing" and _data_loc(data, tuple(e["loc"]), True) in meant)
    ]
    merged = _merge_unions(kept or errors, data)
    return UserError.several(
        [_problem(e, data, path, text, overrides) for e in merged[:SHOWN_PROBLEMS]],
        total=len(merged),
    )


def _merge_unions(errors: Sequence[Any], data: Mapping[str, Any]) -> list[Any]:
    """A value that fits none of a union's types (``at = { cc = [1] }``: a string, an integer,
    a number or a bool) fails once per alternative at the same key: one error, expecting any."""
    out: list[Any] = []
    by_loc: dict[tuple[Any, ...], dict[str, Any]] = {}
    for error in errors:
        if error["type"] not in _EXPECTED:
            out.append(error)
            continue
        # pydantic names the alternative after the key ("at", "cc", "str"): the file's keys only.
        loc = _data_loc(data, tuple(error["loc"]), False)
        merged = by_loc.get(loc)
        if merged is None:
            merged = {**error, "loc": loc, "expected": [_EXPECTED[error["type"]]]}
            by_loc[loc] = merged
            out.append(merged)
        elif _EXPECTED[error["type"]] not in merged["expected"]:
            merged["expected"].append(_EXPECTED[error["type"]])
    return out


def _meant(loc: Loc) -> str | None:
    """The key of the same table an unknown key is closest to, if one is close."""
    model = _model_at(loc)
    known = list(model.model_fields) if model is not None else []
    close = difflib.get_close_matches(str(loc[-1]), known, n=1, cutoff=0.6)
    return close[0] if close else None


def _misspelt(data: Mapping[str, Any], loc: Loc) -> str | None:
    """A key written beside a missing one and close to it: in [scenario], where any key is a
    template parameter, 'templat' is not refused as unknown, so the missing 'template' is the
    only place to point at it."""
    table: Any = data
    for part in loc[:-1]:
        try:
            table = table[part]
        except (KeyError, IndexError, TypeError):
            return None
    if not isinstance(table, Mapping):
        return None
    written = [str(key) for key in table if key != loc[-1]]
    close = difflib.get_close_matches(str(loc[-1]), written, n=1, cutoff=0.75)
    return close[0] if close else None


def _problem(
    error: Any, data: Mapping[str, Any], path: Path, text: str, overrides: Sequence[Override]
) -> UserError:
    loc = _data_loc(data, tuple(error["loc"]), error["type"] == "missing")
    if error["type"] == "extra_forbidden":
        key = str(loc[-1])
        model = _model_at(loc)
        known = list(model.model_fields) if model is not None else []
        hint = _suggest(key, known) if known else ""
        if model is DesignSpec and key in _engine_options():
            hint = f"; engine options go in [design.options], e.g. options = {{ {key} = ... }}"
        return UserError(f"unknown key '{key}'" + hint, **_where(path, text, overrides, loc))
    if error["type"] == "missing":
        written = _misspelt(data, loc)
        if written is not None:
            return UserError(
                f"missing key '{loc[-1]}'; is '{written}' meant?",
                **_where(path, text, overrides, loc, (*loc[:-1], written)),
            )
        return UserError(f"missing key '{loc[-1]}'", **_where(path, text, overrides, loc, loc[:-1]))
    message = _describe(error)
    if loc and loc[-1] == "levels":
        message = (
            "expected levels as a list of values, or as a table of tables of template "
            f"parameters, got {error.get('input')!r}"
        )
    return UserError(message, **_where(path, text, overrides, loc))


def _engine_options() -> set[str]:
    from mptcplab.design.generate import ENGINES

    return {name for _, accepted in ENGINES.values() for name in accepted}


# --- loading ------------------------------------------------------------------------------------


def load(
    path: str | Path,
    changes: Mapping[str, Any] | Sequence[Override | str] | None = None,
) -> Campaign:
    """Read and validate a campaign file.

    ``changes`` sets keys the file does not have or replaces those it has, before validation:
    ``{"backend": "emu", "scenario.scheduler": "linger"}`` (dotted keys; see
    :mod:`mptcplab.campaign.overrides`), or the same as ``--set`` options,
    ``["backend=emu", "scenario.scheduler=linger"]``.
    """
    path = Path(path)
    if changes is None:
        overrides: tuple[Override, ...] = ()
    elif isinstance(changes, Mapping):
        overrides = from_mapping(changes)
    else:
        overrides = from_sequence(changes)
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise UserError(f"no campaign file at {path}", field="CAMPAIGN") from None
    except IsADirectoryError:
        raise UserError(
            "expected a campaign file (.toml), got a directory", file=str(path)
        ) from None
    except (OSError, UnicodeDecodeError) as exc:
        raise UserError(f"cannot read the campaign file ({exc})", file=str(path)) from None
    return parse(text, path, overrides)


def parse(text: str, path: Path, overrides: Sequence[Override] = ()) -> Campaign:
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        match = re.search(r"line (\d+)", str(exc))
        raise UserError(
            f"not valid TOML ({exc})",
            file=str(path),
            line=int(match.group(1)) if match else None,
        ) from None
    if looks_like_scenario(data):
        raise UserError(
            "this is a scenario file, not a campaign: it has "
            f"{written_keys(data, SCENARIO_KEYS)}, but no [scenario] or [design]; run it with "
            f"mptcplab sim {path} or mptcplab emu {path}, or name it in a campaign's [scenario] "
            'table (file = "...") to run it over a design',
            file=str(path),
        )
    overrides = tuple(overrides)
    data = apply(data, overrides, str(path))
    try:
        spec = CampaignSpec.model_validate(data)
    except ValidationError as exc:
        raise _error_from_validation(exc, data, path, text, overrides) from None
    return _Checker(spec, path, text, overrides).campaign()


class _Checker:
    """What the schema cannot say: names that must exist (backend, metrics, template and its
    parameters), factor domains, and that every template parameter is set exactly once."""

    def __init__(
        self, spec: CampaignSpec, path: Path, text: str, overrides: tuple[Override, ...]
    ) -> None:
        self.spec = spec
        self.path = path
        self.text = text
        self.overrides = overrides
        self.fixed = dict(spec.scenario.model_extra or {})
        self.owners: dict[Target, str] = {}  # parameter (element) -> factor that sets it
        self.defaults: dict[str, Any] = {}  # the template's parameters and their defaults
        self.scenario_file: ScenarioFile | None = None  # instead of a template
        self.fixed_written: dict[str, str] = {}
        self.list_defaults: dict[str, list[Any]] = {}

    def fail(self, message: str, *loc: str | int) -> UserError:
        return UserError(message, **_where(self.path, self.text, self.overrides, loc))

    def campaign(self) -> Campaign:

        self.check_backend()
        self.check_metrics()
        self.check_design()
        template = self.scenario_source()
        quantitative: list[Factor] = []
        targets: dict[str, Target] = {}
        qualitative: list[QualitativeFactor] = []
        for factor_name, fs in self.spec.factors.items():
            self.check_factor_name(factor_name)
            kind = fs.kind or ("categorical" if fs.levels is not None else "continuous")
            if kind == "categorical":
                qualitative.append(self.qualitative(factor_name, fs))
            else:
                factor, target = self.quantitative(factor_name, kind, fs)
                quantitative.append(factor)
                targets[factor_name] = target
        self.check_lists_complete()
        self.check_published(quantitative, qualitative)
        campaign = Campaign(
            spec=self.spec,
            path=self.path,
            text=self.text,
            quantitative=tuple(quantitative),
            targets=targets,
            qualitative=tuple(qualitative),
            owners=self.owners,
            fixed=self.fixed,
            template=template,
            overrides=self.overrides,
            fixed_written=self.fixed_written,
            list_defaults=self.list_defaults,
        )
        self.check_domains(campaign)
        return campaign

    def changed(self, *loc: str | int) -> bool:
        """Whether a key set on loading (``--set``) gave ``loc``."""
        return bool(self.overrides) and (
            blamed(self.overrides, loc, tomllib.loads(self.text)) is not None
        )

    def check_domains(self, campaign: Campaign) -> None:
        """Each quantitative factor at both ends of its domain, the others at their middle and
        the qualitative factors at their first level, through the template (or scenario file):
        a value it refuses is the factor's, whatever points the design happens to draw. Only a
        complaint about the factor's own parameter counts: one about another is left to the
        planner, which blames the key that set that one."""
        if not campaign.quantitative:
            return
        middle = {f.name: f.to_values([0.5]).tolist()[0] for f in campaign.quantitative}
        levels: dict[Target, Any] = {}
        for qualitative in campaign.qualitative:
            levels.update(next(iter(qualitative.levels.values())))
        for factor in campaign.quantitative:
            target = campaign.targets[factor.name]
            for end, u in (("low", 0.0), ("high", 1.0)):
                value = factor.to_values([u]).tolist()[0]
                values = {**middle, factor.name: value}
                assignments = {campaign.targets[n]: v for n, v in values.items()} | levels
                params = assign(campaign.fixed, assignments, campaign.list_defaults)
                try:
                    campaign.template(**params)
                except UserError as exc:
                    if _about(exc.field, str(target)):
                        raise self.fail(
                            f"{campaign.scenario_source} rejects {target} = {value!r} at the "
                            f"{end} end of the factor's domain: {exc.detail}",
                            "factors",
                            factor.name,
                            end,
                        ) from None
                except (TypeError, ValueError):  # the planner reports what it can
                    pass

    def scenario_source(self) -> Callable[..., Any]:
        """The template, or the scenario file, that gives each run's scenario; the fixed keys
        of [scenario] checked against it."""
        from mptcplab.scenario import templates

        name = self.spec.scenario.template
        if self.spec.scenario.file is not None:
            if name is not None:
                raise self.fail(
                    "give either `template` or `file` (a scenario file), not both",
                    "scenario",
                    "file",
                )
            self.scenario_file = self.load_scenario_file(self.spec.scenario.file)
            # One spelling per field (`links[0].loss`, not also `links[wifi].loss`), so that a
            # field set twice is caught.
            self.fixed_written = {self.resolve(key, "scenario", key): key for key in self.fixed}
            self.fixed = {resolved: self.fixed[key] for resolved, key in self.fixed_written.items()}
            return self.scenario_file
        if name is None:
            extras = {"scenario": self.spec.scenario.model_extra or {}}
            for wanted in ("template", "file"):
                written = _misspelt(extras, ("scenario", wanted))
                if written is not None:
                    where = _where(
                        self.path,
                        self.text,
                        self.overrides,
                        ("scenario", wanted),
                        ("scenario", written),
                    )
                    raise UserError(f"missing key '{wanted}'; is '{written}' meant?", **where)
            raise self.fail(
                "missing key 'template' (a scenario template) or 'file' (a scenario file)",
                "scenario",
            )
        if name not in templates.TEMPLATES:
            known = sorted(templates.TEMPLATES)
            raise self.fail(
                f"unknown template '{name}'" + _suggest(name, known), "scenario", "template"
            )
        self.defaults = templates.parameters(name)
        for key in self.fixed:
            self.check_param(key, "scenario", key)
        return templates.TEMPLATES[name]

    def load_scenario_file(self, raw: str) -> ScenarioFile:
        """The campaign's scenario file, relative to the campaign file's folder. A problem in
        that file is reported at its own line; a missing file at the campaign's `file` key."""
        path = Path(raw)
        if not path.is_absolute():
            path = self.path.parent / path
        if not path.is_file():
            what = "a directory" if path.is_dir() else "nothing"
            raise self.fail(
                f"expected a scenario file (.toml or .json) at {path}, found {what} "
                "(a relative path starts at the campaign file's folder)",
                "scenario",
                "file",
            )
        return ScenarioFile(path)

    def resolve(self, raw: str, *loc: str | int) -> str:
        """A field path of the scenario file, checked and spelt one way (positions, not ids)."""
        assert self.scenario_file is not None
        if raw.split(".", 1)[0].split("[", 1)[0].strip() == "seed":
            raise self.fail(_SEED_IS_DERIVED, *loc)
        try:
            return self.scenario_file.resolve(raw)
        except UserError as exc:
            # A fixed key is its own path; a factor's `param` is not in the field shown.
            named = bool(loc) and loc[-1] == raw
            raise self.fail(exc.detail if named else f"{raw}: {exc.detail}", *loc) from None

    def check_design(self) -> None:
        """What [design] the schema cannot judge: options the planner passes itself, and
        several designs of an engine that ignores the seed (copies of one design, whose
        comparison would measure nothing)."""
        from mptcplab.design.generate import seed_free

        design = self.spec.design
        for key, why in (
            ("rng", "each design's seed derives from the campaign's `seed`"),
            ("progress", "the runner reports the design's progress itself"),
        ):
            if key in design.options:
                raise self.fail(
                    f"'{key}' is not a design option: {why}; remove it", "design", "options", key
                )
        if design.designs > 1 and (reason := seed_free(design.kind, design.options)):
            raise self.fail(
                f"designs = {design.designs} would be {design.designs} copies of one design: "
                f"{reason}; set designs = 1, or use an engine or options that draw on the seed",
                "design",
                "designs",
            )

    def check_backend(self) -> None:
        from mptcplab.campaign.backends import BACKENDS

        backends = self.spec.backends
        if backends is None:
            backend = self.spec.backend
            if backend not in BACKENDS:
                raise self.fail(
                    f"unknown backend '{backend}'" + _suggest(backend, list(BACKENDS)), "backend"
                )
            return
        if "backend" in self.spec.model_fields_set:
            raise self.fail(
                "give either `backend` (one backend) or `backends` (cross-validation), not both",
                "backends",
            )
        if not backends:
            raise self.fail(
                'expected at least one backend, e.g. backends = ["sim", "emu"]', "backends"
            )
        for i, backend in enumerate(backends):
            if backend not in BACKENDS:
                raise self.fail(
                    f"unknown backend '{backend}'" + _suggest(backend, list(BACKENDS)),
                    "backends",
                    i,
                )
            if backend in backends[:i]:
                raise self.fail(f"backend '{backend}' is listed twice", "backends", i)
        if BACKEND_LEVEL in self.spec.factors:
            raise self.fail(
                f"a factor named '{BACKEND_LEVEL}' clashes with `backends`, which adds the "
                "qualitative factor of that name; rename the factor",
                "factors",
                BACKEND_LEVEL,
            )

    def check_factor_name(self, name: str) -> None:
        """A factor is a column of the runs table beside the run's own columns and its metrics:
        one of their names would overwrite theirs (or they its)."""
        if name == POINT_INDEX:
            what = "the design's point numbers"
        elif name in RESERVED_FACTOR_NAMES:
            what = "a column of every run"
        elif is_metric_name(name):
            what = "a metric"
        else:
            return
        raise self.fail(
            f"a factor cannot be named '{name}', which is {what}; rename the factor "
            f'(`param = "{name}"` keeps the parameter it sets)',
            "factors",
            name,
        )

    def check_metrics(self) -> None:
        for i, name in enumerate(self.spec.metrics):
            self.check_metric(name, "metrics", i)
            if name in self.spec.metrics[:i]:
                # Each metric is a column of the tables: a repeat made two columns of one name.
                raise self.fail(f"metric '{name}' is listed twice", "metrics", i)

    def check_metric(self, name: str, *loc: str | int) -> None:
        found = flow_metric(name)
        if found is not None and found[1] == FLOW_PLACEHOLDER:
            raise self.fail(
                f"write a flow entry's id in place of {FLOW_PLACEHOLDER}, e.g. "
                f"'{found[0].prefix}.type2' for the users of flow entry 'type2'",
                *loc,
            )
        if not is_metric_name(name):
            known = all_metric_names()
            raise self.fail(f"unknown metric '{name}'" + _suggest(name, known), *loc)
        if name in REFERENCE_METRICS and not self.spec.reference_runs:
            raise self.fail(
                f"metric '{name}' compares with single-path TCP runs: set reference_runs = true",
                *loc,
            )

    def check_published(
        self, quantitative: Sequence[Factor], qualitative: Sequence[QualitativeFactor]
    ) -> None:
        """Each published figure names a metric and the factors' settings it was measured at:
        levels of qualitative factors, values inside the quantitative factors' domains."""
        numeric = {f.name: f for f in quantitative}
        levels = {f.name: list(f.levels) for f in qualitative}
        if self.spec.backends is not None:
            levels[BACKEND_LEVEL] = list(self.spec.backends)
        for i, entry in enumerate(self.spec.published):
            self.check_metric(entry.metric, "published", i, "metric")
            settings = [("at", n, v) for n, v in entry.at.items()]
            settings += [("relative_to", n, v) for n, v in entry.relative_to.items()]
            if entry.relative_to and all(
                same_setting(entry.at.get(n), v) for n, v in entry.relative_to.items()
            ):
                raise self.fail(
                    "names the runs of 'at' again: a ratio needs other settings in its denominator",
                    "published",
                    i,
                    "relative_to",
                )
            for key, name, value in settings:
                loc = ("published", i, key, name)
                if name in levels:
                    if not any(same_setting(level, value) for level in levels[name]):
                        raise self.fail(
                            f"factor '{name}' has no level {value!r}; expected one of: "
                            + ", ".join(levels[name]),
                            *loc,
                        )
                elif name in numeric:
                    factor = numeric[name]
                    if isinstance(value, (bool, str)):
                        raise self.fail(
                            f"factor '{name}' is quantitative: expected a number in "
                            f"[{factor.low:g}, {factor.high:g}], got {value!r}",
                            *loc,
                        )
                    if not factor.low <= value <= factor.high:
                        raise self.fail(
                            f"{value!r} is outside the domain [{factor.low:g}, "
                            f"{factor.high:g}] of factor '{name}'",
                            *loc,
                        )
                else:
                    known = [*levels, *numeric]
                    raise self.fail(
                        f"'{key}' names '{name}', which is not a factor"
                        + (_suggest(name, known) if known else "; the campaign has no factors"),
                        *loc,
                    )

    def check_param(self, param: str, *loc: str | int) -> None:
        if self.scenario_file is not None:
            self.resolve(param, *loc)
            return
        if param == "seed":
            raise self.fail(_SEED_IS_DERIVED, *loc)
        if param not in self.defaults:
            implicit = len(loc) == 2 and loc[0] == "factors"
            hint = " (a factor without `param` sets the parameter of its own name)"
            raise self.fail(
                f"template '{self.spec.scenario.template}' has no parameter '{param}'"
                + (hint if implicit else "")
                + _suggest(param, list(self.defaults)),
                *loc,
            )

    def target(self, raw: str, *loc: str | int) -> Target:
        if self.scenario_file is not None:
            return Target(self.resolve(raw, *loc))
        match = _PARAM_TARGET.match(raw)
        if match is None:
            raise self.fail(
                f"expected a template parameter 'name' or 'name[index]', got {raw!r}", *loc
            )
        index = match.group(2)
        return Target(match.group(1), None if index is None else int(index))

    def claim(self, target: Target, owner: str, *loc: str | int) -> None:
        """Record that factor ``owner`` sets ``target``; each parameter has one source."""
        self.check_param(target.param, *loc)
        previous = self.owners.get(target)
        if previous is not None and previous != owner:
            raise self.fail(f"{target} is already set by factor '{previous}'", *loc)
        self.owners[target] = owner
        if target.param not in self.fixed:
            return
        if target.index is None:
            raise self.fail(
                f"{target} is both a fixed parameter in [scenario] and set by factor '{owner}'; "
                "remove one",
                *loc,
            )
        base = self.fixed[target.param]
        if not isinstance(base, list):
            raise self.fail(
                f"{target} indexes '{target.param}', but [scenario] gives it a "
                f"{type(base).__name__}, not a list",
                *loc,
            )

    def quantitative(self, name: str, kind: str, fs: FactorSpec) -> tuple[Factor, Target]:
        loc = ("factors", name)
        if fs.low is None or fs.high is None:
            missing = "low" if fs.low is None else "high"
            raise self.fail(
                f"missing key '{missing}': a {kind} factor needs low and high "
                "(or levels for a qualitative factor)",
                *loc,
            )
        if fs.levels is not None:
            raise self.fail(
                f"'levels' is only for categorical factors (kind = {kind!r})", *loc, "levels"
            )
        if fs.low > fs.high:
            # An option that changed one end is the likely mistake, not the file's other end.
            key = "high" if self.changed(*loc, "high") and not self.changed(*loc, "low") else "low"
            raise self.fail(
                f"domain low > high ({fs.low} > {fs.high}); expected low < high", *loc, key
            )
        try:
            factor = Factor(name=name, kind=kind, low=fs.low, high=fs.high, log=fs.log)
        except ValueError as exc:
            raise self.fail(str(exc), *loc) from None
        target = self.target(fs.param or name, *loc, "param")
        self.claim(target, name, *((*loc, "param") if fs.param else loc))
        return factor, target

    def qualitative(self, name: str, fs: FactorSpec) -> QualitativeFactor:
        loc = ("factors", name)
        for key in ("low", "high"):
            if getattr(fs, key) is not None:
                raise self.fail(
                    f"'{key}' is only for quantitative factors; a categorical factor takes levels",
                    *loc,
                    key,
                )
        if fs.log:
            raise self.fail(
                "'log' is only for quantitative factors: a categorical factor's levels are not "
                "scaled",
                *loc,
                "log",
            )
        if not fs.levels:
            raise self.fail("expected 'levels', a non-empty list or table", *loc, "levels")
        levels: dict[str, dict[Target, Any]] = {}
        if isinstance(fs.levels, list):
            target = self.target(fs.param or name, *loc, "param")
            self.claim(target, name, *((*loc, "param") if fs.param else loc))
            for value in fs.levels:
                label = str(value).lower() if isinstance(value, bool) else str(value)
                if label in levels:
                    raise self.fail(f"level {value!r} is listed twice", *loc, "levels")
                levels[label] = {target: value}
            return QualitativeFactor(name, levels)
        if fs.param is not None:
            raise self.fail(
                "levels given as tables name their parameters themselves; remove 'param'",
                *loc,
                "param",
            )
        for label, assignments in fs.levels.items():
            if not assignments:
                raise self.fail(
                    "expected at least one parameter in this level", *loc, "levels", label
                )
            level: dict[Target, Any] = {}
            for key, value in assignments.items():
                target = self.target(key, *loc, "levels", label, key)
                self.claim(target, name, *loc, "levels", label, key)
                level[target] = value
            levels[label] = level
        return QualitativeFactor(name, levels)

    def check_lists_complete(self) -> None:
        """Every element of a list parameter that factors index must be given somewhere: by a
        factor, by the list in [scenario], or by the template's default list (its per-path
        parameters: an element no factor sets keeps the default)."""
        indexed: dict[str, list[Target]] = {}
        for target in self.owners:
            if target.index is not None:
                indexed.setdefault(target.param, []).append(target)
        for param, set_by_factors in indexed.items():
            indices = {t.index for t in set_by_factors}
            top = max(i for i in indices if i is not None)
            owner = self.owners[Target(param, top)]
            given = self.list_given(param, top, owner)
            missing = [i for i in range(given, top + 1) if i not in indices]
            if missing:
                # The factor past the gap is the likely mistake (a wrong index), not the first.
                raise self.fail(
                    f"{param}[{missing[0]}] is not set but factor '{owner}' sets {param}[{top}]: "
                    f"give '{param}' as a list in [scenario] or map a factor to "
                    f"{param}[{missing[0]}]",
                    "factors",
                    owner,
                )

    def list_given(self, param: str, top: int, owner: str) -> int:
        """How many leading elements of list ``param`` come from outside the factors: the
        list in [scenario], else the template's default list (recorded for planning, and
        ``top``, the highest index a factor sets, checked against its length)."""
        if param in self.fixed:
            return len(self.fixed[param])
        default = self.defaults.get(param)
        if not isinstance(default, (list, tuple)) or not default:
            return 0
        self.list_defaults[param] = list(default)
        if top >= len(default):
            raise self.fail(
                f"{param}[{top}] is out of range: template '{self.spec.scenario.template}' "
                f"takes {len(default)} values of '{param}' (default {list(default)}), "
                f"indices 0 to {len(default) - 1}",
                "factors",
                owner,
            )
        return len(default)


def _about(field: str | None, param: str) -> bool:
    """Whether a template's (or scenario file's) complaint at ``field`` is about ``param`` (or
    an element or field of it)."""
    return field is not None and (field == param or field.startswith((f"{param}.", f"{param}[")))


def assign(
    fixed: Mapping[str, Any],
    assignments: Mapping[Target, Any],
    list_defaults: Mapping[str, list[Any]],
) -> dict[str, Any]:
    """Template keyword arguments: the fixed parameters with the factors' values written in;
    an indexed list that [scenario] does not give starts from ``list_defaults``."""
    params = {k: list(v) for k, v in list_defaults.items()}
    params.update({k: (list(v) if isinstance(v, list) else v) for k, v in fixed.items()})
    for target, value in assignments.items():
        if target.index is None:
            params[target.param] = value
            continue
        values = params.setdefault(target.param, [])
        values.extend([None] * (target.index + 1 - len(values)))
        values[target.index] = value
    return params

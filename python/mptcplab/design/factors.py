"""Factors of an experiment and the pure mapping between the unit cube and factor values.

Spec ``algorithms.md`` §4.1: every design is built on [0, 1]^d; factor k with range [a_k, b_k]
maps ``u -> a_k + u (b_k - a_k)``, optionally on a log scale (then the space-filling property
holds for log(x)); integer factors are rounded after scaling; categorical factors split [0, 1]
into equal-width bins, one per level.

An integer factor is scaled onto [low - 1/2, high + 1/2] before rounding, not onto [low, high]:
rounding [low, high] would give the two end values half-width bins (integers 1..4 under a
uniform u would come out 1/6, 1/3, 1/3, 1/6), and a Latin hypercube with one point per level
would miss the ends. On the extended range each value owns an equal share of [0, 1] (on a log
scale, a share proportional to log((v + 1/2) / (v - 1/2))), as a categorical level does.
"""

from __future__ import annotations

import contextlib
import math
import numbers
from collections.abc import Hashable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal, get_args

import numpy as np
import numpy.typing as npt
import pandas as pd

from ._common import as_unit_points

FactorKind = Literal["continuous", "integer", "categorical"]
KINDS: tuple[str, ...] = get_args(FactorKind)
POINT_INDEX = "point_id"
#: Largest magnitude of an integer factor's bounds: the mapping computes in doubles, which hold
#: every integer up to 2^53 and no longer all of them past it (and int64 wraps past 2^63).
MAX_INTEGER_BOUND = 2**53


def _is_number(value: object) -> bool:
    return isinstance(value, numbers.Real) and not isinstance(value, bool)


@dataclass(frozen=True)
class Factor:
    """One factor: a name, a kind and its domain.

    - ``continuous``: real values in [low, high], linear or log scale (``log=True`` needs low > 0);
    - ``integer``: integers in [low, high] with |low|, |high| <= 2^53, each taking an equal
      share of [0, 1] (of log-space on a log scale), linear or log scale;
    - ``categorical``: one of ``levels`` (unordered; each level gets an equal share of [0, 1]).
    """

    name: str
    kind: FactorKind = "continuous"
    low: float | None = None
    high: float | None = None
    log: bool = False
    levels: tuple[Hashable, ...] | None = None

    def __post_init__(self) -> None:
        if not isinstance(self.name, str) or not self.name.strip():
            raise ValueError(f"factor name: expected a non-empty string, got {self.name!r}")
        where = f"factor '{self.name}'"
        if self.kind not in KINDS:
            raise ValueError(f"{where}: kind must be one of {list(KINDS)}, got {self.kind!r}")
        if not isinstance(self.log, bool):
            raise ValueError(f"{where}: log must be true or false, got {self.log!r}")
        if self.kind == "categorical":
            self._check_categorical(where)
        else:
            self._check_numeric(where)

    def _check_categorical(self, where: str) -> None:
        if self.low is not None or self.high is not None or self.log:
            raise ValueError(f"{where}: a categorical factor takes 'levels', not low/high/log")
        levels = self.levels
        if levels is None or isinstance(levels, str | bytes) or not isinstance(levels, Iterable):
            raise ValueError(f"{where}: expected 'levels', a non-empty list, got {levels!r}")
        levels = tuple(levels)
        if not levels:
            raise ValueError(f"{where}: expected at least one level in 'levels'")
        for level in levels:
            if not isinstance(level, Hashable) or isinstance(level, tuple):
                raise ValueError(f"{where}: level {level!r} must be a string, number or boolean")
        if len(set(levels)) != len(levels):
            dupes = sorted({repr(v) for v in levels if levels.count(v) > 1})
            raise ValueError(f"{where}: levels must be distinct, repeated: {', '.join(dupes)}")
        object.__setattr__(self, "levels", levels)

    def _check_numeric(self, where: str) -> None:
        if self.levels is not None:
            raise ValueError(
                f"{where}: 'levels' is only for categorical factors (kind={self.kind})"
            )
        for field in ("low", "high"):
            value = getattr(self, field)
            if not _is_number(value) or not math.isfinite(float(value)):
                raise ValueError(f"{where}: expected a finite number for '{field}', got {value!r}")
            if self.kind == "integer":
                if not float(value).is_integer():
                    raise ValueError(f"{where}: expected an integer for '{field}', got {value!r}")
                # Compared as given: float(2**53 + 1) is 2**53 and would pass.
                if abs(value) > MAX_INTEGER_BOUND:
                    raise ValueError(
                        f"{where}: expected an integer '{field}' within ±2^53 "
                        f"(±{MAX_INTEGER_BOUND}), got {value!r}"
                    )
        low, high = float(self.low), float(self.high)  # type: ignore[arg-type]
        if not low < high:
            raise ValueError(
                f"{where}: expected low < high, got low={self.low!r}, high={self.high!r}"
            )
        if self.log and low <= 0:
            raise ValueError(f"{where}: a log-scale factor needs low > 0, got low={self.low!r}")
        if self.kind == "integer":
            object.__setattr__(self, "low", int(low))
            object.__setattr__(self, "high", int(high))
        else:
            object.__setattr__(self, "low", low)
            object.__setattr__(self, "high", high)

    @classmethod
    def continuous(cls, name: str, low: float, high: float, *, log: bool = False) -> Factor:
        return cls(name=name, kind="continuous", low=low, high=high, log=log)

    @classmethod
    def integer(cls, name: str, low: int, high: int, *, log: bool = False) -> Factor:
        return cls(name=name, kind="integer", low=low, high=high, log=log)

    @classmethod
    def categorical(cls, name: str, levels: Sequence[Hashable]) -> Factor:
        # Passed on as given: tuple("olia") would make four one-letter levels before the
        # check that refuses a string could see it.
        return cls(name=name, kind="categorical", levels=levels)  # type: ignore[arg-type]

    @classmethod
    def from_mapping(cls, data: Mapping[str, Any], *, name: str | None = None) -> Factor:
        """Build a factor from a TOML/JSON table.

        ``kind`` defaults to ``categorical`` when ``levels`` is given, else ``continuous``. The
        name may come from the table or from ``name`` (e.g. the TOML key).
        """
        allowed = {"name", "kind", "low", "high", "log", "levels"}
        unknown = sorted(set(data) - allowed)
        label = name if name is not None else data.get("name", "?")
        if unknown:
            raise ValueError(
                f"factor '{label}': unknown field(s) {unknown}; expected {sorted(allowed)}"
            )
        fields = dict(data)
        if name is not None:
            if "name" in fields and fields["name"] != name:
                raise ValueError(f"factor '{name}': table says name={fields['name']!r}")
            fields["name"] = name
        if "name" not in fields:
            raise ValueError("factor: missing field 'name'")
        fields.setdefault("kind", "categorical" if "levels" in fields else "continuous")
        if fields.get("levels") is not None and not isinstance(fields["levels"], str | bytes):
            with contextlib.suppress(TypeError):  # the constructor reports it
                fields["levels"] = tuple(fields["levels"])
        return cls(**fields)

    @property
    def is_quantitative(self) -> bool:
        return self.kind != "categorical"

    def to_values(self, u: npt.ArrayLike) -> np.ndarray:
        """Map unit-interval coordinates to factor values (no range checks on ``u``)."""
        u = np.asarray(u, dtype=float)
        if self.kind == "categorical":
            assert self.levels is not None
            n_levels = len(self.levels)
            index = np.minimum(np.floor(u * n_levels).astype(np.int64), n_levels - 1)
            return np.asarray(self.levels, dtype=object)[index]
        if self.kind == "integer":
            return self._integer_values(u)
        low, high = float(self.low), float(self.high)  # type: ignore[arg-type]
        if self.log:
            x = np.exp(math.log(low) * (1.0 - u) + math.log(high) * u)
        else:
            # This form returns low and high exactly at u = 0 and u = 1.
            x = low * (1.0 - u) + high * u
        x = np.where(u <= 0.0, low, np.where(u >= 1.0, high, x))
        return np.clip(x, low, high)

    def _integer_values(self, u: np.ndarray) -> np.ndarray:
        # Equal-width bins of [low - 1/2, high + 1/2] (see the module's docstring); u = 1 lands
        # on the upper edge of the last bin and is clipped into it.
        low, high = int(self.low), int(self.high)  # type: ignore[arg-type]
        count = high - low + 1
        if self.log:
            x = np.exp(math.log(low - 0.5) * (1.0 - u) + math.log(high + 0.5) * u)
            offset = np.floor(x + 0.5) - low
        else:
            # Offsets from low, not low + u * count: those stay exact for bounds near 2^53.
            offset = np.floor(u * count)
        offset = np.clip(offset, 0, count - 1).astype(np.int64)
        return low + offset

    def to_unit(self, values: npt.ArrayLike) -> np.ndarray:
        """Inverse of :meth:`to_values`: factor values to [0, 1] (categorical: bin centres)."""
        where = f"factor '{self.name}'"
        if self.kind == "categorical":
            assert self.levels is not None
            position = {level: i for i, level in enumerate(self.levels)}
            out = []
            for value in np.asarray(values, dtype=object).ravel():
                if value not in position:
                    raise ValueError(
                        f"{where}: {value!r} is not one of the levels {list(self.levels)}"
                    )
                out.append((position[value] + 0.5) / len(self.levels))
            return np.asarray(out, dtype=float)
        x = np.asarray(values, dtype=float)
        low, high = float(self.low), float(self.high)  # type: ignore[arg-type]
        bad = ~np.isfinite(x) | (x < low) | (x > high)
        if np.any(bad):
            raise ValueError(
                f"{where}: value {float(x[bad][0])!r} outside [{self.low}, {self.high}]"
            )
        if self.kind == "integer":
            # The value's position in [low - 1/2, high + 1/2], the range to_values rounds from:
            # on the linear scale the centre of the value's bin, so the two round-trip.
            low, high = low - 0.5, high + 0.5
        if self.log:
            return (np.log(x) - math.log(low)) / (math.log(high) - math.log(low))
        return (x - low) / (high - low)


def _check_factor_list(factors: Sequence[Factor]) -> list[Factor]:
    factors = list(factors)
    if not factors:
        raise ValueError("factors: expected at least one factor")
    for f in factors:
        if not isinstance(f, Factor):
            raise ValueError(f"factors: expected Factor objects, got {f!r}")
    names = [f.name for f in factors]
    if len(set(names)) != len(names):
        dupes = sorted({n for n in names if names.count(n) > 1})
        raise ValueError(f"factors: names must be distinct, repeated: {', '.join(dupes)}")
    return factors


def scale(
    points: npt.ArrayLike, factors: Sequence[Factor], *, dedupe: bool = False
) -> pd.DataFrame:
    """Map unit-cube points (n, d) to factor values, one column per factor in ``factors`` order.

    Continuous factors map linearly (or geometrically with ``log``), integer values and
    categorical levels are chosen by equal-width bins of [0, 1] (integers: of log-space with
    ``log``). The index, named ``point_id``, is the row of ``points``. With ``dedupe=True`` rows
    that became identical after rounding or binning are dropped (the first is kept, with its
    ``point_id``).
    Use ``scale(...).to_dict("records")`` for a list of dicts.
    """
    factors = _check_factor_list(factors)
    try:
        arr = np.asarray(points, dtype=float)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"points: expected a numeric (n, d) array ({exc})") from None
    if arr.ndim != 2:
        raise ValueError(f"points: expected a 2-D array of shape (n, d), got shape {np.shape(arr)}")
    if arr.shape[1] != len(factors):
        raise ValueError(
            f"points: {arr.shape[1]} columns for {len(factors)} factors "
            f"({', '.join(f.name for f in factors)})"
        )
    for j, f in enumerate(factors):
        col = arr[:, j]
        bad = ~np.isfinite(col) | (col < -1e-12) | (col > 1.0 + 1e-12)
        if np.any(bad):
            row = int(np.flatnonzero(bad)[0])
            raise ValueError(
                f"factor '{f.name}': point {row} has coordinate {float(col[row])!r}; "
                "expected a value in [0, 1]"
            )
    unit = as_unit_points(arr)
    columns: dict[str, Any] = {}
    for j, f in enumerate(factors):
        values = f.to_values(unit[:, j])
        columns[f.name] = values.tolist() if f.kind == "categorical" else values
    frame = pd.DataFrame(columns, index=pd.RangeIndex(unit.shape[0], name=POINT_INDEX))
    if dedupe:
        frame = frame[~frame.duplicated(keep="first")]
    return frame


def unscale(frame: pd.DataFrame, factors: Sequence[Factor]) -> np.ndarray:
    """Map factor values back to the unit cube (n, d), e.g. to assess a rounded design's quality."""
    factors = _check_factor_list(factors)
    if not isinstance(frame, pd.DataFrame):
        raise ValueError(
            f"frame: expected a pandas DataFrame with one column per factor (as scale returns), "
            f"got {type(frame).__name__}"
        )
    missing = [f.name for f in factors if f.name not in frame.columns]
    if missing:
        raise ValueError(f"unscale: columns missing for factor(s) {missing}")
    return np.column_stack([f.to_unit(frame[f.name].to_numpy()) for f in factors])

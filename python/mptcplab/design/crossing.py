"""Crossing a space-filling design of quantitative factors with qualitative factors.

Paasch, Khalili, Bonaventure, "On the Benefits of Applying Experimental Design to Improve Multipath
TCP", CoNEXT 2013 (spec ``algorithms.md`` §4.6): every variant of the qualitative factors
(congestion control, buffer policy, penalisation, ...) runs on the same WSP points, so variants are
compared point by point rather than on different samples of the space.
"""

from __future__ import annotations

import itertools
from collections.abc import Hashable, Mapping, Sequence

import pandas as pd

from .factors import POINT_INDEX, Factor


def _qualitative_levels(
    qualitative: Sequence[Factor] | Mapping[str, Sequence[Hashable]],
) -> list[tuple[str, tuple[Hashable, ...]]]:
    if isinstance(qualitative, Mapping):
        factors = [Factor.categorical(name, levels) for name, levels in qualitative.items()]
    else:
        factors = list(qualitative)
    out = []
    for f in factors:
        if not isinstance(f, Factor) or f.kind != "categorical":
            raise ValueError(f"qualitative factors: expected categorical factors, got {f!r}")
        assert f.levels is not None
        out.append((f.name, f.levels))
    names = [name for name, _ in out]
    if len(set(names)) != len(names):
        dupes = sorted({n for n in names if names.count(n) > 1})
        raise ValueError(
            f"qualitative factors: names must be distinct, repeated: {', '.join(dupes)}"
        )
    return out


def cross(
    design: pd.DataFrame,
    qualitative: Sequence[Factor] | Mapping[str, Sequence[Hashable]],
) -> pd.DataFrame:
    """Full cross product of qualitative levels x design points.

    ``design`` holds one row per design point (e.g. from :func:`scale`); its ``point_id`` column,
    or else its index, identifies the points. The result has columns ``point_id``, the design's
    columns, then one column per qualitative factor; variants are in the order of
    ``itertools.product`` over the factors' levels (first factor slowest), each listing all points.
    """
    if not isinstance(design, pd.DataFrame):
        raise ValueError(
            f"design: expected a pandas DataFrame of factor values, got {type(design)}"
        )
    if len(design) == 0:
        raise ValueError("design: expected at least one design point")
    levels = _qualitative_levels(qualitative)
    if POINT_INDEX in design.columns:
        points = design.reset_index(drop=True)
    else:
        points = design.reset_index(drop=True)
        points.insert(0, POINT_INDEX, design.index.to_numpy())
    if points[POINT_INDEX].duplicated().any():
        raise ValueError(f"design: {POINT_INDEX} values must be distinct")
    clash = [name for name, _ in levels if name in points.columns]
    if clash:
        raise ValueError(
            f"qualitative factor(s) {clash} clash with design columns {list(points.columns)}"
        )
    if not levels:
        return points
    frames = []
    for combination in itertools.product(*(lv for _, lv in levels)):
        block = points.copy()
        for (name, _), value in zip(levels, combination, strict=True):
            block[name] = [value] * len(block)
        frames.append(block)
    return pd.concat(frames, ignore_index=True)

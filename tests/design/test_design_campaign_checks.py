"""A campaign's [design] table: what the schema cannot judge is refused on loading, at its line."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from mptcplab.campaign import build_plan, load
from mptcplab.errors import UserError

CAMPAIGN = """\
name = "design-table"
seed = 3
replications = 1
metrics = ["goodput_mbps"]

[design]
kind = "{kind}"
{size}
designs = 3
{options}

[scenario]
template = "two_path"
duration_s = 1.0

[factors.cap0]
low = 1.0
high = 20.0
param = "capacity_mbps[0]"

[factors.cap1]
low = 1.0
high = 20.0
param = "capacity_mbps[1]"
"""

CANDIDATES = "options = { candidates = [[0.1, 0.2], [0.5, 0.5], [0.9, 0.3], [0.2, 0.8]] }"


def _load(tmp_path: Path, kind: str, size: str = "points = 4", options: str = ""):
    text = CAMPAIGN.format(kind=kind, size=size, options=options)
    path = tmp_path / "c.toml"
    path.write_text(text)
    return text, lambda: load(path)


def _line(text: str, needle: str) -> int:
    return next(i for i, line in enumerate(text.splitlines(), 1) if needle in line)


SEED_FREE = [
    ("sobol", "points = 4", "options = { scramble = false }", "unscrambled Sobol'"),
    ("factorial", "points = 4", "", "a factorial design does not depend on the seed"),
    ("factorial", "", "options = { levels = 2 }", "a factorial design"),
    ("wsp", "points = 2", CANDIDATES, "over given candidates"),
]
SEEDED = [
    ("sobol", "points = 4", ""),
    ("lhs", "points = 4", ""),
    ("wsp", "points = 4", ""),
    ("wsp", "points = 2", CANDIDATES.replace("] }", '], init = "random" }')),
]


def test_several_designs_are_refused_exactly_when_the_engine_ignores_the_seed(
    tmp_path: Path,
) -> None:
    for kind, size, options, reason in SEED_FREE:
        text, loading = _load(tmp_path, kind, size, options)
        with pytest.raises(UserError) as caught:
            loading()
        assert caught.value.field == "design.designs", kind
        assert caught.value.line == _line(text, "designs = 3")
        assert caught.value.detail.startswith("designs = 3 would be 3 copies of one design: ")
        assert reason in caught.value.detail
    # The oracle for the others: the three designs planned differ.
    for kind, size, options in SEEDED:
        _, loading = _load(tmp_path, kind, size, options)
        units = [
            d.unit_points for d in build_plan(loading(), backend="sim", backend_version="v").designs
        ]
        assert len(units) == 3
        assert not any(np.array_equal(units[i], units[j]) for i in range(3) for j in range(i))


@pytest.mark.parametrize("key", ["rng", "progress"])
def test_options_the_planner_passes_itself_are_refused_by_name(tmp_path: Path, key: str) -> None:
    text, loading = _load(tmp_path, "wsp", options=f"options = {{ {key} = 3 }}")
    with pytest.raises(UserError) as caught:
        loading()
    assert caught.value.field == f"design.options.{key}"
    assert caught.value.line == _line(text, "options = ")
    assert caught.value.detail.startswith(f"'{key}' is not a design option: ")

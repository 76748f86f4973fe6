"""``mptcplab design`` without a campaign: its errors name the command-line options."""

from __future__ import annotations

import pytest


@pytest.mark.parametrize("kind", ["wsp", "lhs", "sobol", "random"])
def test_a_design_without_its_size_names_the_points_option(cli, kind: str) -> None:
    code, out, err = cli("design", "--kind", kind, "-d", "2")
    assert code == 2 and not out
    assert err.strip() == f"error: --points: a {kind} design needs its number of points"


def test_a_factorial_design_takes_its_size_from_its_levels(cli) -> None:
    code, out, _ = cli("design", "--kind", "factorial", "-d", "2", "--option", "levels=3")
    assert code == 0
    assert out.startswith("first 9 of 9 points")


def test_an_unknown_kind_is_named_before_any_missing_size(cli) -> None:
    code, _, err = cli("design", "--kind", "bogus", "-d", "2")
    assert code == 2
    assert "unknown kind 'bogus'" in err and "--points" not in err

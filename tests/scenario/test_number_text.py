"""Numbers in messages about a scenario read the same from Python and from the simulator
(crates/mpsim/src/number_text.rs holds the same table): the shortest digits that give the number
back, in decimal between 1e-4 and 1e16 in magnitude and in exponent form outside, never the
hundreds of digits Rust's plain ``{}`` writes for 1e300."""

from __future__ import annotations

import math

import pytest

from mptcplab.scenario.number_text import number_text


@pytest.mark.parametrize(
    ("value", "text"),
    [
        (8.0, "8"),
        (0.5, "0.5"),
        (-2.25, "-2.25"),
        (0.0001, "0.0001"),
        (1e15, "1000000000000000"),
        (0.0, "0"),
        (-0.0, "-0"),
        (math.inf, "inf"),
        (-math.inf, "-inf"),
        (math.nan, "NaN"),
        (-1e300, "-1e300"),
        (1e16, "1e16"),
        (1.5e-7, "1.5e-7"),
        (-1e-300, "-1e-300"),
        (9.99e-5, "9.99e-5"),
        (1.7976931348623157e308, "1.7976931348623157e308"),
        (5e-324, "5e-324"),
    ],
)
def test_a_number_is_written_as_the_simulator_writes_it(value: float, text: str) -> None:
    assert number_text(value) == text


def test_every_text_reads_back_as_its_number() -> None:
    for value in (1 / 3, 2.0**63, 1e-5 / 3, 123456.789, -7e22, 6.02214076e23):
        assert float(number_text(value)) == value

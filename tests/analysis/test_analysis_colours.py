"""Each variant of a report's plots has a colour of its own, however many there are (the
NSDI 2012 latency campaign has 16; a palette of ten repeated its first six)."""

from __future__ import annotations

import numpy as np

from mptcplab.analysis.plots import colours, difference_cdf


def test_sixteen_variants_get_sixteen_colours() -> None:
    variants = [f"v{i}" for i in range(16)]
    given = colours(variants)
    assert list(given) == variants
    assert len(set(given.values())) == 16


def test_a_few_variants_keep_the_palettes_first_colours() -> None:
    assert colours(["a", "b"]) == {"a": "#1f77b4", "b": "#d62728"}


def test_many_compared_pairs_are_drawn() -> None:
    pairs = [(f"pair {i}", np.linspace(-1.0, 1.0, 5) + i) for i in range(12)]
    assert difference_cdf(pairs, "goodput_mbps", "Mbit/s").startswith(b"\x89PNG")

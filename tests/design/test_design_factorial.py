"""Full and two-level fractional factorial designs."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from mptcplab.design import fractional_factorial, full_factorial


def test_full_factorial_sizes_levels_and_order() -> None:
    x = full_factorial([2, 3, 4])
    assert x.shape == (24, 3)
    assert len({tuple(row) for row in x}) == 24
    for k, count in enumerate([2, 3, 4]):
        values, counts = np.unique(x[:, k], return_counts=True)
        assert np.allclose(values, np.linspace(0, 1, count))
        assert set(counts.tolist()) == {24 // count}
    # Standard order: the first factor changes fastest.
    assert x[:4, 0].tolist() == [0.0, 1.0, 0.0, 1.0]
    assert x[:2, 1].tolist() == [0.0, 0.0]


def test_full_factorial_with_one_level_count_for_all_factors() -> None:
    assert full_factorial(3, d=4).shape == (81, 4)


def coded(x: np.ndarray) -> np.ndarray:
    return 2 * x - 1


def test_half_fraction_with_generator_d_abc() -> None:
    x = fractional_factorial(4, ["D=ABC"])
    assert x.shape == (8, 4)
    assert set(np.unique(x).tolist()) == {0.0, 1.0}
    assert np.all(x.sum(axis=0) == 4), "each column must be half zeros"
    c = coded(x)
    assert np.array_equal(c[:, 3], c[:, 0] * c[:, 1] * c[:, 2])
    # Main-effect columns of a resolution IV design are mutually orthogonal.
    for i, j in itertools.combinations(range(4), 2):
        assert c[:, i] @ c[:, j] == 0
    # The basic factors A, B, C form a full 2^3 factorial.
    assert len({tuple(row) for row in x[:, :3]}) == 8


def test_saturated_2_7_4_design_and_signed_generators() -> None:
    gens = ["D=AB", "E=AC", "F=BC", "G=ABC"]
    x = fractional_factorial(7, gens)
    assert x.shape == (8, 7)
    assert np.all(x.sum(axis=0) == 4)
    c = coded(x)
    a, b, cc = c[:, 0], c[:, 1], c[:, 2]
    for col, expected in zip(range(3, 7), [a * b, a * cc, b * cc, a * b * cc], strict=True):
        assert np.array_equal(c[:, col], expected)

    y = coded(fractional_factorial(5, ["D=AB", "E=-ABC"]))
    assert np.array_equal(y[:, 4], -y[:, 0] * y[:, 1] * y[:, 2])


def test_no_generators_is_the_full_two_level_factorial() -> None:
    assert np.array_equal(fractional_factorial(3, []), full_factorial(2, d=3))


def test_letter_i_is_skipped() -> None:
    x = fractional_factorial(9, ["J=ABC"])
    c = coded(x)
    assert x.shape == (256, 9)
    assert np.array_equal(c[:, 8], c[:, 0] * c[:, 1] * c[:, 2])


@pytest.mark.parametrize(
    ("k", "generators", "message"),
    [
        (4, ["D=ABQ"], "'Q'"),
        (4, ["DABC"], "form"),
        (5, ["D=AB", "E=AD"], "itself generated"),
        (4, ["D=AB", "D=BC"], "more than once"),
        (4, ["D=AAB"], "twice"),
        (4, ["D=ABD"], "itself"),
    ],
)
def test_bad_generators_are_explained(k: int, generators: list[str], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        fractional_factorial(k, generators)


def test_bad_levels_are_explained() -> None:
    with pytest.raises(ValueError, match="factor 1"):
        full_factorial([3, 1])
    with pytest.raises(ValueError, match="needs d"):
        full_factorial(3)
    # A string is iterable: 'abc' (a mistyped --option levels=...) is not three factors.
    for wrong in ("abc", 2.5):
        with pytest.raises(ValueError, match="expected an integer or a list of integers"):
            full_factorial(wrong, d=3)  # type: ignore[arg-type]

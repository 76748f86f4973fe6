"""Engine dispatch by name, Sobol' sequences and the rng argument."""

from __future__ import annotations

import numpy as np
import pytest

from mptcplab.design import generate, sobol, uniform_random


@pytest.mark.parametrize("kind", ["wsp", "lhs", "sobol", "random"])
def test_each_engine_gives_n_points_in_the_unit_cube(kind: str) -> None:
    x = generate(kind, 3, 16, rng=7)
    assert x.shape == (16, 3)
    assert np.all((x >= 0) & (x <= 1))
    assert np.array_equal(x, generate(kind, 3, 16, rng=7))


def test_lhs_options_pass_through() -> None:
    plain = generate("lhs", 2, 10, rng=1, optimize=False, centered=True)
    assert sorted(plain[:, 0].tolist()) == [(i + 0.5) / 10 for i in range(10)]
    tuned = generate("lhs", 2, 10, rng=1, it=50, profile="LINEAR")
    assert tuned.shape == (10, 2)


def test_factorial_kinds() -> None:
    assert generate("factorial", 2, rng=0, levels=[3, 4]).shape == (12, 2)
    assert generate("factorial", 2, rng=0, levels=100).shape == (10_000, 2)
    assert generate("factorial", 3, 27, rng=0).shape == (27, 3)
    half = generate("factorial", 4, 8, rng=0, generators=["D=ABC"])
    assert half.shape == (8, 4)


@pytest.mark.parametrize(
    ("args", "kwargs", "message"),
    [
        (("sobolev", 2, 8), {}, "unknown kind"),
        (("wsp", 2, 8), {"oversampl": 30}, r"unknown option\(s\) \['oversampl'\]"),
        (("random", 2, 8), {"scramble": True}, "accepted: none"),
        (("wsp", 2), {}, "number of points n is required"),
        (("factorial", 2, 10), {}, r"not a power.*--option levels=L.*options = \{ levels = L \}"),
        (("factorial", 2, 10), {"levels": 3}, "give 9 points, not n = 10"),
        (("lhs", 2, 5), {"optimize": False, "it": 10}, "only apply with optimize"),
        # Sizes whose pairwise distances, or whose factorial grid, would not fit in memory.
        (("wsp", 2, 10_001), {}, "at most 10000 points, got 10001"),
        (("sobol", 1_001, 8), {}, "at most 1000 factors, got 1001"),
        (("factorial", 2), {"levels": 101}, "more than the 10000 points a design may have"),
    ],
)
def test_bad_requests_are_explained(args: tuple, kwargs: dict, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        generate(*args, rng=0, **kwargs)


def test_scrambled_sobol_is_stratified_in_each_coordinate() -> None:
    # The first 2^m points of a (scrambled) Sobol' sequence put one point in each interval
    # [i/2^m, (i+1)/2^m) of every coordinate.
    m = 6
    x = sobol(5, 2**m, rng=3)
    for k in range(5):
        cells = np.floor(x[:, k] * 2**m).astype(int)
        assert sorted(cells.tolist()) == list(range(2**m))
    assert np.array_equal(x, sobol(5, 2**m, rng=3))
    assert not np.array_equal(x, sobol(5, 2**m, rng=4))


def test_sobol_accepts_sizes_that_are_not_powers_of_two_silently(recwarn) -> None:
    assert sobol(2, 10, rng=0).shape == (10, 2)
    assert not [w for w in recwarn if "balance" in str(w.message)]


@pytest.mark.parametrize("rng", [None, 1.5, "seed", -1, True])
def test_rng_must_be_a_seed_or_generator(rng) -> None:
    with pytest.raises(ValueError, match="rng"):
        uniform_random(2, 3, rng=rng)


def test_generator_and_seed_sequence_are_accepted() -> None:
    a = uniform_random(2, 3, rng=np.random.default_rng(5))
    b = uniform_random(2, 3, rng=np.random.SeedSequence(5))
    assert np.array_equal(a, b)


@pytest.mark.parametrize(
    ("kind", "option", "value"),
    [
        ("sobol", "scramble", "no"),  # a non-empty string is true: it would have scrambled
        ("lhs", "optimize", "false"),
        ("lhs", "centered", 1),
        ("wsp", "exact", 0),
    ],
)
def test_a_flag_takes_true_or_false_only(kind: str, option: str, value: object) -> None:
    extra = {"optimize": False} if option == "centered" else {}
    with pytest.raises(ValueError, match=f"{option}: expected true or false, got {value!r}"):
        generate(kind, 2, 8, rng=1, **{option: value}, **extra)
    generate(kind, 2, 8, rng=1, **{option: False}, **extra)


@pytest.mark.parametrize(
    ("kind", "option", "value"),
    [("lhs", "p", "abc"), ("lhs", "c", "abc"), ("lhs", "T0", True), ("wsp", "oversampling", "x")],
)
def test_a_number_option_refuses_other_types_by_name(kind: str, option: str, value: object) -> None:
    with pytest.raises(ValueError, match=f"{option}: expected a number, got {value!r}"):
        generate(kind, 2, 8, rng=1, **{option: value})


@pytest.mark.parametrize(("d", "n"), [(2, 1), (2, 3), (3, 1), (1, 1)])
def test_a_factorial_of_too_few_points_names_n_not_levels(d: int, n: int) -> None:
    # The user gave n and no levels: a complaint about levels would name a field never written.
    with pytest.raises(ValueError, match=rf"^design 'factorial': n = {n} points? (is|are) fewer"):
        generate("factorial", d, n, rng=0)


def test_generators_take_levels_as_a_list_of_twos() -> None:
    one_for_all = generate("factorial", 3, rng=0, generators=["C=AB"], levels=2)
    per_factor = generate("factorial", 3, rng=0, generators=["C=AB"], levels=[2, 2, 2])
    assert np.array_equal(per_factor, one_for_all)
    for levels in ([2, 3, 2], [2, 2], 3):
        with pytest.raises(ValueError, match=r"generators need two-level factors .*levels = "):
            generate("factorial", 3, rng=0, generators=["C=AB"], levels=levels)


SEED_CASES = [
    ("wsp", 8, {}),
    ("wsp", 6, {"candidates": np.random.default_rng(3).random((64, 2))}),
    ("wsp", 6, {"candidates": np.random.default_rng(3).random((64, 2)), "init": "random"}),
    ("lhs", 8, {}),
    ("lhs", 8, {"optimize": False}),
    ("sobol", 8, {}),
    ("sobol", 8, {"scramble": False}),
    ("random", 8, {}),
    ("factorial", 9, {}),
    ("factorial", None, {"generators": ["C=AB"]}),
]


@pytest.mark.parametrize(("kind", "n", "options"), SEED_CASES)
def test_seed_free_says_exactly_when_two_seeds_give_one_design(
    kind: str, n: int | None, options: dict
) -> None:
    from mptcplab.design.generate import seed_free  # new with the check it serves

    d = 3 if "generators" in options else 2
    same = np.array_equal(
        generate(kind, d, n, rng=1, **options), generate(kind, d, n, rng=2, **options)
    )
    assert (seed_free(kind, options) is not None) == same

"""Design engines chosen by name, so that a campaign file can say ``design = "wsp"``.

Every engine returns points in [0, 1]^d as an (n, d) array; options are the engine's keyword
arguments and are checked by name so a misspelt option in a TOML file is reported, not ignored.
"""

from __future__ import annotations

import numbers
from collections.abc import Callable, Mapping
from typing import Any

import numpy as np

from ._common import MAX_DIMS, MAX_POINTS, RngLike, check_count, check_flag
from .factorial import fractional_factorial, full_factorial
from .lhs import lhs, maximin_lhs
from .sobol import sobol, uniform_random
from .wsp import wsp

#: Told (steps done, steps expected) by the engines whose work can take minutes (WSP's search
#: for dmin over thousands of candidates); the others finish in seconds and say nothing.
Progress = Callable[[int, int], None]

_LEVELS_HOW = " (--option levels=L, or options = { levels = L } in a campaign's [design])"


def _wsp(
    d: int, n: int | None, rng: RngLike, options: dict[str, Any], progress: Progress | None
) -> np.ndarray:
    return wsp(d, _need_n("wsp", n), rng=rng, progress=progress, **options)


def _lhs(
    d: int, n: int | None, rng: RngLike, options: dict[str, Any], progress: Progress | None
) -> np.ndarray:
    n = _need_n("lhs", n)
    if not check_flag("optimize", options.pop("optimize", True)):
        centered = options.pop("centered", False)
        if options:
            raise ValueError(
                f"design 'lhs': option(s) {sorted(options)} only apply with optimize = true"
            )
        return lhs(d, n, rng=rng, centered=centered)
    return maximin_lhs(d, n, rng=rng, **options)


def _sobol(
    d: int, n: int | None, rng: RngLike, options: dict[str, Any], progress: Progress | None
) -> np.ndarray:
    return sobol(d, _need_n("sobol", n), rng=rng, **options)


def _random(
    d: int, n: int | None, rng: RngLike, options: dict[str, Any], progress: Progress | None
) -> np.ndarray:
    return uniform_random(d, _need_n("random", n), rng=rng)


def _factorial(
    d: int, n: int | None, rng: RngLike, options: dict[str, Any], progress: Progress | None
) -> np.ndarray:
    generators = options.get("generators")
    levels = options.get("levels")
    if generators is not None:
        if not _two_levels(levels, d):
            raise ValueError(
                f"design 'factorial': generators need two-level factors (levels = 2, or a list "
                f"of {d} 2s), got levels = {levels!r}"
            )
        points = fractional_factorial(d, generators)
    else:
        if levels is None:
            if n is None:
                raise ValueError(
                    "design 'factorial': give the option 'levels' (per factor or one for all)"
                    f"{_LEVELS_HOW}"
                )
            if n < 2**d:
                # Else n = 1 gives one level per factor, and the complaint is about `levels`,
                # which the user never gave.
                points_are = "point is" if n == 1 else "points are"
                raise ValueError(
                    f"design 'factorial': n = {n} {points_are} fewer than the 2^{d} = {2**d} "
                    f"of the smallest full factorial of {d} factor{'s' if d > 1 else ''} "
                    "(2 levels each)"
                )
            per_factor = round(n ** (1.0 / d))
            if per_factor**d != n:
                raise ValueError(
                    f"design 'factorial': n = {n} is not a power L^{d}; give the option "
                    f"'levels' instead{_LEVELS_HOW}"
                )
            levels = per_factor
        points = full_factorial(levels, d=d)
    if n is not None and points.shape[0] != n:
        raise ValueError(
            f"design 'factorial': levels/generators give {points.shape[0]} points, not n = {n}"
        )
    return points


def _two_levels(levels: object, d: int) -> bool:
    if levels is None:
        return True
    if isinstance(levels, list | tuple):
        if len(levels) != d:
            return False
        counts: list[object] = list(levels)
    else:
        counts = [levels]
    return all(
        isinstance(count, numbers.Integral) and not isinstance(count, bool) and count == 2
        for count in counts
    )


def seed_free(kind: str, options: Mapping[str, Any]) -> str | None:
    """Why the design ``kind`` with ``options`` does not depend on ``rng``, or None when it
    does: several designs drawn from different seeds would then be one design repeated, and a
    comparison across them would measure nothing."""
    if kind == "factorial":
        return "a factorial design does not depend on the seed"
    scramble = options.get("scramble", True)
    if kind == "sobol" and isinstance(scramble, bool | np.bool_) and not scramble:
        return "an unscrambled Sobol' sequence does not depend on the seed (scramble = false)"
    if (
        kind == "wsp"
        and not isinstance(options.get("candidates", "sobol"), str)
        and options.get("init", "center") != "random"
    ):
        return (
            'a WSP design over given candidates does not depend on the seed unless init = "random"'
        )
    return None


def _need_n(kind: str, n: int | None) -> int:
    if n is None:
        raise ValueError(f"design '{kind}': the number of points n is required")
    return n


# name -> (engine, accepted options)
ENGINES: dict[str, tuple[Callable[..., np.ndarray], frozenset[str]]] = {
    "wsp": (
        _wsp,
        frozenset(
            {
                "candidates",
                "n_candidates",
                "oversampling",
                "metric",
                "init",
                "max_iter",
                "exact",
                "restarts",
            }
        ),
    ),
    "lhs": (_lhs, frozenset({"optimize", "centered", "T0", "c", "it", "p", "profile", "Imax"})),
    "sobol": (_sobol, frozenset({"scramble"})),
    "random": (_random, frozenset()),
    "factorial": (_factorial, frozenset({"levels", "generators"})),
}


def check_options(kind: str, options: Mapping[str, Any]) -> None:
    """Refuse an unknown engine, or an option it does not take (ValueError). A caller that
    spreads options it was given into :func:`generate` checks them first: one named ``rng`` or
    ``progress`` would otherwise clash with the argument of that name."""
    if kind not in ENGINES:
        raise ValueError(f"design: unknown kind {kind!r}; expected one of {sorted(ENGINES)}")
    accepted = ENGINES[kind][1]
    unknown = sorted(set(options) - accepted)
    if unknown:
        expected = sorted(accepted) if accepted else "none"
        raise ValueError(f"design '{kind}': unknown option(s) {unknown}; accepted: {expected}")


def generate(
    kind: str,
    d: int,
    n: int | None = None,
    *,
    rng: RngLike,
    progress: Progress | None = None,
    **options: Any,
) -> np.ndarray:
    """Generate a design by engine name: ``wsp``, ``lhs`` (maximin LHS; ``optimize=False`` for a
    plain random LHS), ``sobol``, ``random`` or ``factorial`` (``levels``: one count or one per
    factor; ``generators``: two-level fractional factorial, e.g. ``["D=ABC"]``).

    Returns an (n, d) array in [0, 1]^d. ``rng`` is required for every kind, also for the
    deterministic factorial designs, so that callers need not special-case them. ``progress``,
    when given, is told how far a long generation is (:data:`Progress`).
    """
    check_options(kind, options)
    engine, _ = ENGINES[kind]
    d = check_count("d", d)
    if d > MAX_DIMS:
        raise ValueError(f"design '{kind}': at most {MAX_DIMS} factors, got {d}")
    if n is not None:
        n = check_count("n", n)
        if n > MAX_POINTS:
            raise ValueError(
                f"design '{kind}': at most {MAX_POINTS} points, got {n} (its quality measures "
                "compare every pair of points)"
            )
    return engine(d, n, rng, dict(options), progress)

"""Scrambled Sobol' sequences and uniform random designs on [0, 1]^d.

Sources: I. M. Sobol', "On the distribution of points in a cube and the approximate evaluation of
integrals", USSR Comput. Math. Math. Phys. 7 (1967) 86-112; Owen-type linear matrix scrambling with
digital shift as implemented by ``scipy.stats.qmc.Sobol`` (Joe & Kuo 2008 direction numbers).
"""

from __future__ import annotations

import warnings

import numpy as np
from scipy.stats import qmc

from ._common import RngLike, as_generator, check_count, check_flag, check_size


def _sobol_engine(d: int, *, scramble: bool, generator: np.random.Generator) -> qmc.Sobol:
    scramble = check_flag("scramble", scramble)
    # scipy >= 1.15 names the argument ``rng``; older releases call it ``seed``.
    try:
        return qmc.Sobol(d, scramble=scramble, rng=generator)
    except TypeError:
        return qmc.Sobol(d, scramble=scramble, seed=generator)


def sobol(d: int, n: int, *, rng: RngLike, scramble: bool = True) -> np.ndarray:
    """First ``n`` points of a (scrambled) Sobol' sequence in [0, 1]^d, shape (n, d).

    The sequence's balance properties hold exactly when ``n`` is a power of two; other sizes are
    allowed (the prefix of the sequence is returned) without scipy's warning about it.
    Without scrambling the sequence starts at the origin and ``rng`` has no effect.
    """
    d, n = check_size(d, n)
    engine = _sobol_engine(d, scramble=scramble, generator=as_generator(rng))
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message=".*balance properties of Sobol.*")
        return engine.random(n)


def sobol_base2(d: int, m: int, *, rng: RngLike, scramble: bool = True) -> np.ndarray:
    """``2**m`` scrambled Sobol' points in [0, 1]^d (the balanced sizes)."""
    d = check_count("d", d)
    m = check_count("m", m, minimum=0)
    engine = _sobol_engine(d, scramble=scramble, generator=as_generator(rng))
    return engine.random_base2(m)


def uniform_random(d: int, n: int, *, rng: RngLike) -> np.ndarray:
    """``n`` independent uniform points in [0, 1)^d, shape (n, d)."""
    d, n = check_size(d, n)
    return as_generator(rng).random((n, d))

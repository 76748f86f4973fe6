"""Latin hypercube designs, and maximin LHS by simulated annealing on the phi_p criterion.

Sources:
- M. D. McKay, R. J. Beckman, W. J. Conover, "A comparison of three methods for selecting values
  of input variables in the analysis of output from a computer code", Technometrics 21 (1979)
  239-245: Latin hypercube sampling.
- M. D. Morris, T. J. Mitchell, "Exploratory designs for computational experiments", J. Statist.
  Planning and Inference 43 (1995) 381-402: phi_p, the column-swap perturbation and the annealing
  schedule of the GEOM_MORRIS profile.
- R package DiceDesign, ``maximinSA_LHS`` (defaults T0 = 10, c = 0.95, it = 2000, p = 50, profile
  GEOM; profiles LINEAR and GEOM_MORRIS with Imax = 100) and G. Damblin, M. Couplet, B. Iooss,
  "Numerical studies of space filling designs", J. of Simulation 7 (2013) 276-289.
- R. Jin, W. Chen, A. Sudjianto, "An efficient algorithm for constructing optimal design of
  computer experiments", J. Statist. Planning and Inference 134 (2005) 268-287: updating phi_p
  from the two changed rows of the distance matrix instead of recomputing it.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Literal

import numpy as np
import numpy.typing as npt
from scipy.spatial.distance import pdist

from ._common import (
    RngLike,
    as_generator,
    as_unit_points,
    check_count,
    check_flag,
    check_real,
    check_size,
)
from .metrics import distance_matrix, euclidean
from .quality import _phi_p_from_distances

Profile = Literal["GEOM", "LINEAR", "GEOM_MORRIS"]
PROFILES: tuple[str, ...] = ("GEOM", "LINEAR", "GEOM_MORRIS")

# The running sum of phi_p terms is updated by differences, whose rounding errors add up while
# the sum itself shrinks; when the accumulated error bound exceeds this fraction of the sum, the
# sum is recomputed from the stored terms.
_RELATIVE_ERROR = 1e-12
_EPS = float(np.finfo(float).eps)
# Outside this range the scaled sum is rebuilt around the current smallest distance.
_SAFE_TOTAL = (1e-200, 1e200)


def _fresh_sum_error(total: float, n: int) -> float:
    """Bound on the rounding error of ``total``, a sum over the n x n positive terms of an n-point
    design just taken by numpy.

    numpy sums an array pairwise, in unrolled leaves of up to 128 terms: a relative error of at
    most about ``(log2 N + 18) u`` for N terms, u the unit roundoff (N. J. Higham, Accuracy and
    Stability of Numerical Algorithms, 2nd ed., §4.2; the leaves add at most 25 roundings where
    the tree would add 7), taken with a margin as ``log2 N + 32``. Below 4,504 points the looser
    ``n u`` this code had first is kept: it leaves room in ``_RELATIVE_ERROR`` there, and as an
    annealing step's acceptance often turns on the last bits of the sum, the tighter bound would
    change designs already made. From 4,504 points ``n u`` spent the whole budget by itself and
    every step summed the n x n matrix afresh: minutes for 5,000 points instead of seconds."""
    units = n if n * _EPS < _RELATIVE_ERROR else math.log2(n * n) + 32
    return _EPS * total * units


def lhs(d: int, n: int, *, rng: RngLike, centered: bool = False) -> np.ndarray:
    """Random Latin hypercube of ``n`` points in [0, 1]^d.

    Column k holds one point in each stratum ``[(i - 1)/n, i/n)``: ``x_ik = (pi_k(i) - U_ik)/n``
    with pi_k a random permutation of 1..n and U ~ U(0, 1], or U = 1/2 when ``centered``.
    """
    d, n = check_size(d, n)
    gen = as_generator(rng)
    strata = np.column_stack([gen.permutation(n) for _ in range(d)])
    offset = np.full((n, d), 0.5) if check_flag("centered", centered) else gen.random((n, d))
    return (strata + offset) / n


class _PhiState:
    """Design, distance matrix and scaled phi_p terms, updated two rows at a time.

    Terms are stored as ``(ref / d_ij)^p`` so that p = 50 neither overflows nor underflows;
    ``phi_p = S^(1/p) / ref`` with S the sum over pairs.
    """

    def __init__(self, x: np.ndarray, p: float) -> None:
        self.x = x.copy()
        self.p = p
        # Row by row: all n x n x d differences at once took 149 GiB for 10,000 points in 200
        # dimensions, within the design limits. The sums are the same bit for bit.
        self.dist = distance_matrix(self.x, euclidean)
        np.fill_diagonal(self.dist, np.inf)
        self.rebase()

    def rebase(self) -> None:
        """Scale terms by the current smallest distance (> 0): the largest term is then 1."""
        self.ref = float(self.dist.min())
        self.terms = (self.ref / self.dist) ** self.p
        self.total = float(self.terms.sum()) / 2.0
        self.error = _fresh_sum_error(self.total, self.x.shape[0])

    @property
    def phi(self) -> float:
        return float(self.total ** (1.0 / self.p) / self.ref)

    def propose(self, i: int, j: int, k: int) -> tuple[float, np.ndarray, np.ndarray, np.ndarray]:
        """New sum, distances of rows i and j and their terms after swapping column k of i and j.

        The sum is infinite when a scaled term overflows (a new distance far below ``ref``).
        """
        x = self.x
        xi = x[i].copy()
        xj = x[j].copy()
        xi[k], xj[k] = x[j, k], x[i, k]
        di = np.sqrt(np.einsum("lk,lk->l", x - xi, x - xi))
        dj = np.sqrt(np.einsum("lk,lk->l", x - xj, x - xj))
        # The swap leaves d_ij unchanged; entries i and j above used the old rows.
        di[i], di[j] = np.inf, self.dist[i, j]
        dj[j], dj[i] = np.inf, self.dist[i, j]
        with np.errstate(over="ignore", divide="ignore"):
            ti = (self.ref / di) ** self.p
            tj = (self.ref / dj) ** self.p
        if not (np.all(np.isfinite(ti)) and np.all(np.isfinite(tj))):
            return float("inf"), np.stack([di, dj]), ti, tj
        old_i, old_j = float(self.terms[i].sum()), float(self.terms[j].sum())
        new_i, new_j = float(ti.sum()), float(tj.sum())
        total = self.total + (new_i - old_i) + (new_j - old_j)
        error = self.error + 4 * _EPS * (self.total + old_i + old_j + new_i + new_j)
        if not error < _RELATIVE_ERROR * total:
            keep = np.ones(x.shape[0], dtype=bool)
            keep[[i, j]] = False
            rest = float(self.terms[np.ix_(keep, keep)].sum()) / 2.0
            total = rest + new_i + new_j - float(tj[i])
            error = _fresh_sum_error(total, x.shape[0])
        self.pending_error = error
        return total, np.stack([di, dj]), ti, tj

    def accept(
        self,
        i: int,
        j: int,
        k: int,
        total: float,
        dists: np.ndarray,
        ti: np.ndarray,
        tj: np.ndarray,
    ) -> None:
        self.x[i, k], self.x[j, k] = self.x[j, k], self.x[i, k]
        for row, dr, t in ((i, dists[0], ti), (j, dists[1], tj)):
            self.dist[row, :] = dr
            self.dist[:, row] = dr
            self.terms[row, :] = t
            self.terms[:, row] = t
        self.total = total
        self.error = self.pending_error
        if not _SAFE_TOTAL[0] < total < _SAFE_TOTAL[1]:
            self.rebase()


@dataclass(frozen=True)
class AnnealingResult:
    """Outcome of :func:`anneal_maximin`: the best design visited and the search record."""

    points: np.ndarray
    initial: np.ndarray
    phi_initial: float
    phi: float
    iterations: int
    accepted: int
    history: np.ndarray  # phi_p of the current design after each iteration


def anneal_maximin(
    design: npt.ArrayLike,
    *,
    rng: RngLike,
    T0: float = 10.0,
    c: float = 0.95,
    it: int = 2000,
    p: float = 50.0,
    profile: Profile = "GEOM",
    Imax: int = 100,
) -> AnnealingResult:
    """Lower phi_p of ``design`` by simulated annealing on column swaps (DiceDesign maximinSA_LHS).

    Each step swaps the values of two random rows in one random column (a Latin hypercube stays
    one), and is accepted with probability ``min(1, exp((phi_old - phi_new)/T))``. Temperature:
    ``GEOM`` ``T_i = c^i T0``; ``LINEAR`` ``T_i = T0 (1 - i/it)``; ``GEOM_MORRIS`` holds T for
    inner loops that end after ``Imax - 1`` proposals in a row without a new best (DiceDesign's
    ``I <- 1; while (I < Imax)``), then ``T <- c T``, for at most ``it`` outer loops (stopping
    early when a whole inner loop accepts nothing).
    Returns the best design visited (DiceDesign returns the last one for GEOM and LINEAR).
    """
    x0 = as_unit_points(design, name="design")
    gen = as_generator(rng)
    it, Imax = _check_annealing(T0=T0, c=c, it=it, p=p, profile=profile, Imax=Imax)
    n, d = x0.shape
    check_size(d, n)
    if n < 2:
        raise ValueError("design: annealing needs at least two points, got 1")
    if n < 3:
        # With two points every swap leaves their distance unchanged; nothing to optimise.
        phi = _phi_direct(x0, p)
        return AnnealingResult(x0.copy(), x0.copy(), phi, phi, 0, 0, np.empty(0))

    if float(pdist(x0).min()) == 0.0:
        raise ValueError("design: two points coincide; phi_p is infinite (start from an LHS)")
    state = _PhiState(x0, p)
    phi_initial = phi_current = state.phi
    best_x, best_phi = state.x.copy(), phi_current
    history: list[float] = []
    accepted = 0
    bounds = np.array([d, n, n - 1])

    def step(temperature: float) -> tuple[bool, bool]:
        """One proposal; returns (accepted, new best)."""
        nonlocal state, phi_current, best_phi, best_x, accepted
        k, i, j = (int(v) for v in gen.integers(0, bounds))
        j += j >= i  # two distinct rows
        total, dists, ti, tj = state.propose(i, j, k)
        trial: np.ndarray | None = None
        if np.isfinite(total):
            phi_new = float(total ** (1.0 / p) / state.ref)
        else:
            # A new distance far below the current smallest one: evaluate directly (rare, and
            # nearly always rejected since phi_p ~ 1/mindist).
            trial = state.x.copy()
            trial[i, k], trial[j, k] = trial[j, k], trial[i, k]
            phi_new = _phi_direct(trial, p)
        if phi_new <= phi_current:
            take = True
        else:
            prob = np.exp((phi_current - phi_new) / temperature) if temperature > 0 else 0.0
            take = bool(gen.random() < prob)
        improved = False
        if take:
            if trial is None:
                state.accept(i, j, k, total, dists, ti, tj)
            else:
                state = _PhiState(trial, p)
            accepted += 1
            phi_current = phi_new
            if phi_new < best_phi:
                best_phi, best_x, improved = phi_new, state.x.copy(), True
        history.append(phi_current)
        return take, improved

    if profile in ("GEOM", "LINEAR"):
        temperature = T0
        i_step = 0
        while temperature > 0 and i_step < it:
            step(temperature)
            i_step += 1
            temperature = c**i_step * T0 if profile == "GEOM" else T0 * (1 - i_step / it)
    else:
        temperature = T0
        for _ in range(it):
            any_accepted = False
            stale = 1
            while stale < Imax:
                took, improved = step(temperature)
                any_accepted |= took
                stale = 1 if improved else stale + 1
            if not any_accepted:
                break
            temperature *= c

    return AnnealingResult(
        points=best_x,
        initial=x0.copy(),
        phi_initial=phi_initial,
        phi=_phi_direct(best_x, p),
        iterations=len(history),
        accepted=accepted,
        history=np.asarray(history),
    )


def _check_annealing(
    *, T0: float, c: float, it: int, p: float, profile: str, Imax: int
) -> tuple[int, int]:
    """Refuse annealing options that would not anneal; returns ``it`` and ``Imax``."""
    it = check_count("it", it)
    Imax = check_count("Imax", Imax)
    if profile not in PROFILES:
        raise ValueError(f"profile: expected one of {list(PROFILES)}, got {profile!r}")
    for name, value in (("T0", T0), ("p", p)):
        if not np.isfinite(check_real(name, value)) or value <= 0:
            raise ValueError(f"{name}: expected a positive number, got {value!r}")
    if not 0 < check_real("c", c) < 1:
        raise ValueError(f"c: expected 0 < c < 1, got {c!r}")
    if profile == "GEOM_MORRIS" and Imax < 2:
        # The inner loop runs while its count of proposals without a new best, starting at 1,
        # stays below Imax: with 1 it would never propose anything.
        raise ValueError(f"Imax: expected an integer >= 2 with profile GEOM_MORRIS, got {Imax}")
    return it, Imax


def _phi_direct(x: np.ndarray, p: float) -> float:
    return _phi_p_from_distances(pdist(x), p)


def maximin_lhs(
    d: int,
    n: int,
    *,
    rng: RngLike,
    T0: float = 10.0,
    c: float = 0.95,
    it: int = 2000,
    p: float = 50.0,
    profile: Profile = "GEOM",
    Imax: int = 100,
    centered: bool = False,
) -> np.ndarray:
    """Maximin Latin hypercube of ``n`` points in [0, 1]^d, shape (n, d).

    A random LHS (:func:`lhs`) improved by :func:`anneal_maximin` with DiceDesign's defaults.
    """
    gen = as_generator(rng)
    _check_annealing(T0=T0, c=c, it=it, p=p, profile=profile, Imax=Imax)
    start = lhs(d, n, rng=gen, centered=centered)
    if n < 2:
        return start  # one point has no distance to spread
    return anneal_maximin(start, rng=gen, T0=T0, c=c, it=it, p=p, profile=profile, Imax=Imax).points

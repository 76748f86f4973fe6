"""WSP space-filling designs: greedy packing of a candidate set with a minimum distance.

Sources:
- J. Santiago, M. Claeys-Bruno, M. Sergent, "Construction of space-filling designs using WSP
  algorithm for high dimensional spaces", Chemometrics and Intelligent Laboratory Systems 113
  (2012) 26-31 (the algorithm by Wootton, Sergent and Phan-Tan-Luu).
- R package DiceDesign, ``wspDesign`` (seed point nearest the centre or a random point, strict
  ``< dmin`` removal). Its final step may append candidate #1 when the last seed removes every
  remaining candidate; this implementation stops instead (spec §4.4, quirk 2).
- Project spec ``algorithms.md`` §4.2-§4.4: bisection on dmin to reach a target size, then
  dropping one point of the closest pair until the size is exact.

Candidates default to a scrambled Sobol' sequence of N >= 20 n points (a power of two, which
keeps the sequence balanced), as in the paper.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Literal

import numpy as np
import numpy.typing as npt

from ._common import (
    MAX_DIMS,
    RngLike,
    as_generator,
    as_unit_points,
    check_count,
    check_flag,
    check_real,
    check_size,
)
from .metrics import Metric, distance_matrix, resolve_metric, unit_cube_diameter
from .sobol import sobol_base2
from .wsp_runs import WspRuns

# Stop bisecting once the bracket is this small relative to the cube's diameter: n(dmin) is a step
# function and no step is narrower than floating-point noise on the distances.
_BRACKET_RESOLUTION = 1e-13
DEFAULT_OVERSAMPLING = 20
#: Largest candidate set: 2^20, a Sobol' set of 100 candidates per point for 10,000 points.
MAX_CANDIDATES = 2**20
DEFAULT_MAX_ITER = 60
DEFAULT_SCAN = 64
# Relative dmin step of the local scan, divided by d because n ~ dmin^-d: after 64 trials the
# scan spans about +-6 % of n, the width of the erratic region around the bracket.
_SCAN_STEP = 0.002

InitRule = Literal["center", "random"] | int

#: Told after each WSP run of a search: (runs done, runs expected). The expected count is the
#: bisection's own bound until the search turns to its local scan or stops early, and equals the
#: runs done once the search ends, so that a bar built on it fills.
SearchProgress = Callable[[int, int], None]


@dataclass(frozen=True)
class WSPResult:
    """A WSP design and how it was obtained.

    ``indices`` are rows of ``candidates`` in selection order. ``dmin`` is the minimum distance of
    the WSP run the design comes from; ``n_selected`` is that run's size before ``n_dropped``
    points were removed (closest pair first) to reach the requested size exactly.
    """

    points: np.ndarray
    indices: np.ndarray
    candidates: np.ndarray
    dmin: float
    n_selected: int
    n_dropped: int
    seed_index: int
    metric: str
    evaluations: int

    @property
    def n(self) -> int:
        return int(self.points.shape[0])


def wsp_seed_index(
    candidates: np.ndarray,
    *,
    init: InitRule = "center",
    rng: RngLike | None = None,
    metric: str | Metric = "euclidean",
) -> int:
    """Index of the first selected point.

    ``"center"``: candidate nearest to (0.5, ..., 0.5); ``"random"``: candidate nearest to a uniform
    random point drawn from ``rng``; an integer: that candidate.
    """
    _, dist = resolve_metric(metric)
    n_cand, d = candidates.shape
    if isinstance(init, bool):
        raise ValueError(f"init: expected 'center', 'random' or a candidate index, got {init!r}")
    if isinstance(init, int | np.integer):
        if not 0 <= int(init) < n_cand:
            raise ValueError(f"init: candidate index {int(init)} outside 0..{n_cand - 1}")
        return int(init)
    if init == "center":
        target = np.full(d, 0.5)
    elif init == "random":
        if rng is None:
            raise ValueError("init='random' needs rng")
        target = as_generator(rng).random(d)
    else:
        raise ValueError(f"init: expected 'center', 'random' or a candidate index, got {init!r}")
    return int(np.argmin(dist(target, candidates)))


def wsp_select(
    candidates: npt.ArrayLike,
    dmin: float,
    *,
    seed_index: int,
    metric: str | Metric = "euclidean",
) -> np.ndarray:
    """Run WSP once with a fixed ``dmin``; return the selected candidate indices in order.

    Every pair of selected points is at least ``dmin`` apart, and every other candidate lies
    strictly within ``dmin`` of some selected point.
    """
    cand = as_unit_points(candidates, name="candidates")
    _, dist = resolve_metric(metric)
    if not np.isfinite(check_real("dmin", dmin)) or dmin < 0:
        raise ValueError(f"dmin: expected a finite distance >= 0, got {dmin!r}")
    seed_index = _check_seed_index(seed_index, cand.shape[0])
    return WspRuns(cand, seed_index, dist).select(float(dmin))


def _check_seed_index(seed_index: object, n_cand: int) -> int:
    # int(1.7) would quietly start from candidate 1.
    if isinstance(seed_index, bool) or not isinstance(seed_index, int | np.integer):
        raise ValueError(f"seed_index: expected a candidate index (an integer), got {seed_index!r}")
    if not 0 <= int(seed_index) < n_cand:
        raise ValueError(f"seed_index: {int(seed_index)} outside 0..{n_cand - 1}")
    return int(seed_index)


def _drop_to_size(points: np.ndarray, n: int, dist: Metric) -> np.ndarray:
    """Positions (into ``points``) kept after dropping one point of the closest pair repeatedly.

    Of the closest pair, the point whose next-nearest neighbour is closer goes (it sits in the more
    crowded region); ties drop the later-selected point. Each drop cannot lower the mindist.
    """
    dm = distance_matrix(points, dist)
    np.fill_diagonal(dm, np.inf)
    alive = np.ones(points.shape[0], dtype=bool)
    for _ in range(points.shape[0] - n):
        flat = int(np.argmin(dm))
        i, j = divmod(flat, dm.shape[1])
        row_i = dm[i].copy()
        row_i[j] = np.inf
        row_j = dm[j].copy()
        row_j[i] = np.inf
        ni, nj = row_i.min(), row_j.min()
        victim = i if (ni < nj or (ni == nj and i > j)) else j
        alive[victim] = False
        dm[victim, :] = np.inf
        dm[:, victim] = np.inf
    return np.flatnonzero(alive)


def wsp_search(
    candidates: npt.ArrayLike,
    n: int,
    *,
    seed_index: int,
    metric: str | Metric = "euclidean",
    max_iter: int = DEFAULT_MAX_ITER,
    scan: int = DEFAULT_SCAN,
    exact: bool = True,
    progress: SearchProgress | None = None,
) -> WSPResult:
    """Find by bisection a ``dmin`` whose WSP design over ``candidates`` has ``n`` points.

    n(dmin) is a non-increasing step function only on average (greedy path effects), so the
    bisection keeps the largest dmin seen with at least ``n`` points and the smallest with fewer.
    When the bracket closes on a jump over ``n``, up to ``scan`` dmin values within a few percent
    of it are tried, since the erratic steps there often give ``n`` exactly.
    If no evaluated dmin gives exactly ``n``, the smallest design larger than ``n`` is thinned to
    ``n`` points by dropping one point of the closest pair at a time (``exact=True``), or the
    design whose size is closest to ``n`` is returned as is (``exact=False``).
    ``progress`` is told the WSP runs done and expected after each (:data:`SearchProgress`); a
    search over thousands of candidates takes seconds to minutes.
    The runs give what runs from scratch would, for less: each resumes after the steps it
    shares with an earlier run (:class:`~mptcplab.design.wsp_runs.WspRuns`), and one that
    passes the size it is tested against stops there.
    """
    cand = as_unit_points(candidates, name="candidates")
    _check_enough_candidates(cand, check_size(cand.shape[1], n)[1])
    return _search(
        cand,
        n,
        seed_index=seed_index,
        metric=metric,
        max_iter=max_iter,
        scan=scan,
        exact=exact,
        progress=progress,
    )


def _check_enough_candidates(cand: np.ndarray, n: int) -> None:
    """Refuse ``n`` above the number of distinct candidates: copies of a point are distinct
    candidates to the search, and past that number it would return copies of design points."""
    if n > cand.shape[0]:
        raise ValueError(f"n: {n} points requested from only {cand.shape[0]} candidates")
    distinct = np.unique(cand, axis=0).shape[0]
    if n > distinct:
        raise ValueError(f"n: {n} points requested from only {distinct} distinct candidates")


def _search(
    cand: np.ndarray,
    n: int,
    *,
    seed_index: int,
    metric: str | Metric,
    max_iter: int,
    scan: int,
    exact: bool,
    progress: SearchProgress | None,
) -> WSPResult:
    """:func:`wsp_search` without the count of distinct candidates: a generated candidate set
    (Sobol' or uniform) has no copies, and a given one is counted once for all restarts."""
    n_cand, d = cand.shape
    _, n = check_size(d, n)
    max_iter = check_count("max_iter", max_iter)
    scan = check_count("scan", scan, minimum=0)
    exact = check_flag("exact", exact)
    if n > n_cand:
        raise ValueError(f"n: {n} points requested from only {n_cand} candidates")
    name, dist = resolve_metric(metric)
    seed_index = _check_seed_index(seed_index, n_cand)

    def result(sel: np.ndarray, dmin: float, keep: np.ndarray | None, evals: int) -> WSPResult:
        if progress is not None:
            progress(evals, evals)
        chosen = sel if keep is None else sel[keep]
        return WSPResult(
            points=cand[chosen],
            indices=chosen,
            candidates=cand,
            dmin=dmin,
            n_selected=int(sel.size),
            n_dropped=int(sel.size - chosen.size),
            seed_index=seed_index,
            metric=name,
            evaluations=evals,
        )

    runs = WspRuns(cand, seed_index, dist)
    lo = 0.0
    hi = unit_cube_diameter(dist, d) * (1.0 + 1e-9) + 1e-12
    above: tuple[float, np.ndarray] | None = None  # largest dmin seen with size >= n
    below: tuple[float, np.ndarray] | None = None  # smallest dmin seen with size < n
    evals = 0
    expected = _bisection_steps(hi, max_iter)
    for _ in range(max_iter):
        mid = 0.5 * (lo + hi)
        # Past n points the bisection needs no more: `above` is run to its end below.
        sel = runs.select(mid, limit=n + 1)
        evals += 1
        if progress is not None:
            progress(evals, max(expected, evals))
        if sel.size == n:
            return result(sel, mid, None, evals)
        if sel.size > n:
            lo, above = mid, (mid, sel)
        else:
            hi, below = mid, (mid, sel)
        if hi - lo <= _BRACKET_RESOLUTION * (hi + 1.0):
            break
    if above is None:
        # Every evaluated dmin gave too few points: dmin = 0 keeps all candidates.
        above = (0.0, runs.select(0.0))
        evals += 1
        if above[1].size == n:
            return result(above[1], 0.0, None, evals)
    else:
        # The rest of a run stopped at n + 1 points, not a run of its own.
        above = (above[0], runs.select(above[0]))
    if above[0] > 0.0:
        # n(dmin) is erratic near the bracket, so nearby dmin values often hit n exactly; a hit
        # keeps the WSP property (every dropped candidate within dmin of a kept point).
        centre = 0.5 * (above[0] + (below[0] if below is not None else above[0]))
        scanned_from = evals
        for k in range(1, scan + 1):
            step = _SCAN_STEP / d * ((k + 1) // 2)
            trial = centre * (1.0 + step if k % 2 else 1.0 - step)
            # A run past the size of `above` cannot replace it.
            sel = runs.select(trial, limit=above[1].size + 1)
            evals += 1
            if progress is not None:
                progress(evals, scanned_from + scan)
            if sel.size == n:
                return result(sel, trial, None, evals)
            if sel.size > n and (sel.size, -trial) < (above[1].size, -above[0]):
                above = (trial, sel)
            elif sel.size < n and (
                below is None or (n - sel.size, trial) < (n - below[1].size, below[0])
            ):
                below = (trial, sel)
    if not exact and below is not None and n - below[1].size < above[1].size - n:
        return result(below[1], below[0], None, evals)
    if not exact:
        return result(above[1], above[0], None, evals)
    dmin_above, sel_above = above
    keep = _drop_to_size(cand[sel_above], n, dist)
    return result(sel_above, dmin_above, keep, evals)


def _bisection_steps(width: float, max_iter: int) -> int:
    """How many halvings of a bracket ``width`` wide the bisection takes at most: it stops once
    the width is ``_BRACKET_RESOLUTION * (hi + 1)`` or less, and ``hi + 1 >= 1``. As ``hi + 1``
    is at most ``width + 1``, it takes at least ``log2(width + 1)`` fewer (two in up to eight
    dimensions with the Euclidean metric)."""
    return min(max_iter, max(1, math.ceil(math.log2(width / _BRACKET_RESOLUTION))))


def wsp_candidates(
    d: int,
    n_candidates: int,
    *,
    rng: RngLike,
    kind: Literal["sobol", "random"] = "sobol",
) -> np.ndarray:
    """Candidate set for WSP: scrambled Sobol' (rounded up to a power of two) or uniform random."""
    d = check_count("d", d)
    if d > MAX_DIMS:
        raise ValueError(f"d: at most {MAX_DIMS} factors, got {d}")
    n_candidates = check_count("n_candidates", n_candidates)
    if n_candidates > MAX_CANDIDATES:
        raise ValueError(
            f"n_candidates: at most {MAX_CANDIDATES} candidates, got {n_candidates} (the "
            "default, 20 per point, gives 200,000 for the largest design)"
        )
    if kind == "sobol":
        m = int(np.ceil(np.log2(n_candidates)))
        return sobol_base2(d, m, rng=rng)
    if kind == "random":
        # The same draws as uniform_random, whose bound is a design's, not a candidate set's.
        return as_generator(rng).random((n_candidates, d))
    raise ValueError(f"candidates: expected 'sobol', 'random' or an (N, d) array, got {kind!r}")


def wsp_design(
    d: int,
    n: int,
    *,
    rng: RngLike,
    candidates: Literal["sobol", "random"] | npt.ArrayLike = "sobol",
    n_candidates: int | None = None,
    oversampling: float = DEFAULT_OVERSAMPLING,
    metric: str | Metric = "euclidean",
    init: InitRule = "center",
    max_iter: int = DEFAULT_MAX_ITER,
    exact: bool = True,
    restarts: int = 1,
    progress: SearchProgress | None = None,
) -> WSPResult:
    """WSP design of ``n`` points in [0, 1]^d with its search record (see :func:`wsp`)."""
    d, n = check_size(d, n)
    restarts = check_count("restarts", restarts)
    exact = check_flag("exact", exact)
    gen = as_generator(rng)
    name, dist = resolve_metric(metric)
    given = not isinstance(candidates, str)
    if given and _is_scalar(candidates):
        # A scalar here is most often a count meant for n_candidates.
        raise ValueError(
            f"candidates: expected 'sobol', 'random' or an (N, d) array of points, "
            f"got {candidates!r}; the number of candidates is n_candidates"
        )
    if given:
        fixed = as_unit_points(candidates, name="candidates")
        if fixed.shape[1] != d:
            raise ValueError(f"candidates: expected {d} columns, got {fixed.shape[1]}")
        _check_enough_candidates(fixed, n)
    else:
        if not np.isfinite(check_real("oversampling", oversampling)) or oversampling < 1:
            raise ValueError(f"oversampling: expected a number >= 1, got {oversampling!r}")
        size = n_candidates if n_candidates is not None else int(np.ceil(oversampling * n))
        if n_candidates is None and size > MAX_CANDIDATES:
            raise ValueError(
                f"oversampling: {oversampling!r} x {n} points is more than the "
                f"{MAX_CANDIDATES} candidates a search may have"
            )
        size = check_count("n_candidates", size)
        if size < n:
            raise ValueError(f"n_candidates: {size} is fewer than the n = {n} points requested")

    best: WSPResult | None = None
    best_key = (0, 0.0)
    runs_before = 0
    for restart in range(restarts):
        cand = fixed if given else wsp_candidates(d, size, rng=gen, kind=candidates)  # type: ignore[arg-type]
        seed = wsp_seed_index(cand, init=init, rng=gen, metric=dist)
        res = _search(
            cand,
            n,
            seed_index=seed,
            metric=dist,
            max_iter=max_iter,
            scan=DEFAULT_SCAN,
            exact=exact,
            progress=_restarts_progress(progress, runs_before, restarts - restart - 1),
        )
        runs_before += res.evaluations
        res = WSPResult(**{**res.__dict__, "metric": name})
        # Without exact, restarts may differ in size: the size nearest n comes first, as
        # mindist alone can prefer a design of another size (fewer points spread wider).
        key = (abs(res.n - n), -_mindist(res.points, dist))
        if best is None or key < best_key:
            best, best_key = res, key
        if given and init != "random":
            break  # a fixed candidate set and seed rule give the same design every time
    if progress is not None:
        progress(runs_before, runs_before)
    assert best is not None
    return best


def _is_scalar(value: object) -> bool:
    try:
        return np.ndim(value) == 0
    except ValueError:  # rows of different lengths: as_unit_points says which
        return False


def _restarts_progress(
    progress: SearchProgress | None, runs_before: int, restarts_after: int
) -> SearchProgress | None:
    """One search's progress as part of several: the runs of the searches before it come first,
    and each search after it is expected to take as many runs as this one."""
    if progress is None:
        return None

    def told(done: int, expected: int) -> None:
        progress(runs_before + done, runs_before + expected * (1 + restarts_after))

    return told


def _mindist(points: np.ndarray, dist: Callable[[np.ndarray, np.ndarray], np.ndarray]) -> float:
    if points.shape[0] < 2:
        return np.inf
    dm = distance_matrix(points, dist)
    np.fill_diagonal(dm, np.inf)
    return float(dm.min())


def wsp(
    d: int,
    n: int,
    *,
    rng: RngLike,
    candidates: Literal["sobol", "random"] | npt.ArrayLike = "sobol",
    n_candidates: int | None = None,
    oversampling: float = DEFAULT_OVERSAMPLING,
    metric: str | Metric = "euclidean",
    init: InitRule = "center",
    max_iter: int = DEFAULT_MAX_ITER,
    exact: bool = True,
    restarts: int = 1,
    progress: SearchProgress | None = None,
) -> np.ndarray:
    """WSP space-filling design: ``n`` points of [0, 1]^d as an (n, d) array.

    Parameters
    ----------
    rng: integer seed or numpy Generator; the same value gives the same design bit for bit.
    candidates: ``"sobol"`` (scrambled Sobol', default), ``"random"`` (uniform) or an (N, d)
        array of candidate points in [0, 1]^d.
    n_candidates: candidate-set size N; default ``ceil(oversampling * n)``, rounded up to a power
        of two for Sobol'.
    metric: ``"euclidean"`` (default), ``"cityblock"``, ``"chebyshev"`` or ``f(x, Y)``.
    init: first point: candidate nearest the centre (default), nearest a random point, or an index.
    max_iter: bisection steps on dmin.
    exact: thin the design to exactly ``n`` points when no dmin gives ``n`` (default); otherwise
        return the size closest to ``n``.
    restarts: number of candidate sets tried; the design with the largest mindist is kept (with
        ``exact=False``, of those whose size is closest to ``n``).
    progress: told (WSP runs done, runs expected) after each run of the search for dmin
        (:data:`SearchProgress`), for a progress bar: thousands of points take minutes.
    """
    return wsp_design(
        d,
        n,
        rng=rng,
        candidates=candidates,
        n_candidates=n_candidates,
        oversampling=oversampling,
        metric=metric,
        init=init,
        max_iter=max_iter,
        exact=exact,
        restarts=restarts,
        progress=progress,
    ).points

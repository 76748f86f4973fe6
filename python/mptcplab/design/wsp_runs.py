"""The WSP runs of one dmin search, each resumed from where an earlier run's path leaves it.

A WSP run (Santiago, Claeys-Bruno & Sergent 2012; :mod:`mptcplab.design.wsp`) over fixed
candidates and seed point is a sequence of steps: from the current point, drop the survivors
closer than dmin, then move to the nearest survivor left. A step depends on dmin only through
that split, so another dmin' repeats it exactly while dmin' stays above every distance the step
dropped and at or below every distance it kept. Over a run's steps these bounds only tighten,
which makes the steps another dmin' repeats a prefix, found by bisection. The search for dmin
evaluates runs ever closer together, most of whose paths agree for their first steps, the
dearest ones: a run resumed after its shared prefix selects what a run from scratch would, at
a fraction of the cost.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .metrics import Metric

#: Recorded runs kept for resuming: the most recent, which bracket the next dmin most closely.
KEPT_RUNS = 4
_NOT_LEFT = np.iinfo(np.int32).max


@dataclass(frozen=True)
class _Path:
    """One run's record: ``selected`` in order; after step ``k``, ``dropped_max[k]`` is the
    largest distance dropped in steps ``0..k`` and ``kept_min[k]`` the smallest kept (so another
    dmin repeats steps ``0..k`` if ``dropped_max[k] < dmin <= kept_min[k]``); ``left_at[c]`` is
    the step at which candidate ``c`` left the survivors (-1 for the seed, ``_NOT_LEFT`` for
    those a run stopped at a limit had not reached)."""

    selected: np.ndarray
    dropped_max: np.ndarray
    kept_min: np.ndarray
    left_at: np.ndarray
    #: The run went to its end (not stopped at a limit).
    complete: bool

    def repeated_steps(self, dmin: float) -> int:
        below = int(np.searchsorted(self.dropped_max, dmin, side="left"))
        # kept_min is non-increasing: count its leading entries >= dmin.
        above = int(np.searchsorted(-self.kept_min, -dmin, side="right"))
        return min(below, above)


class WspRuns:
    """Runs WSP over ``cand`` from candidate ``seed`` for any dmin, with the same result as
    the plain loop of :func:`mptcplab.design.wsp.wsp_select`."""

    def __init__(self, cand: np.ndarray, seed: int, dist: Metric) -> None:
        self._cand = cand
        self._seed = seed
        self._dist = dist
        self._paths: list[_Path] = []

    def select(self, dmin: float, limit: int | None = None) -> np.ndarray:
        """Selected candidate indices in selection order; with ``limit``, the run stops once it
        has selected ``limit`` points (so ``limit`` points back mean at least that many)."""
        path, steps = self._longest_prefix(dmin)
        if path is not None and (
            (steps == path.dropped_max.size and path.complete)
            or (limit is not None and steps + 1 >= limit)
        ):
            # The selections this run repeats; past a limit, the points up to it.
            return path.selected[:limit].copy()
        if path is None or steps == 0:
            left_at = np.full(self._cand.shape[0], _NOT_LEFT, dtype=np.int32)
            left_at[self._seed] = -1
            selected = [self._seed]
            dropped_max: list[float] = []
            kept_min: list[float] = []
            dropped, kept = -np.inf, np.inf
        else:
            left_at = path.left_at.copy()
            # What left later on that path has not left on this one yet.
            left_at[left_at >= steps] = _NOT_LEFT
            selected = path.selected[: steps + 1].tolist()
            dropped_max = path.dropped_max[:steps].tolist()
            kept_min = path.kept_min[:steps].tolist()
            dropped, kept = dropped_max[-1], kept_min[-1]
        remaining = np.flatnonzero(left_at == _NOT_LEFT)
        step = len(dropped_max)
        current = selected[-1]
        while remaining.size and (limit is None or len(selected) < limit):
            d_cur = self._dist(self._cand[current], self._cand[remaining])
            keep = d_cur >= dmin
            gone = ~keep
            if gone.any():
                dropped = max(dropped, float(d_cur[gone].max()))
                left_at[remaining[gone]] = step
            d_kept = d_cur[keep]
            remaining = remaining[keep]
            if remaining.size:
                k = int(np.argmin(d_kept))
                kept = min(kept, float(d_kept[k]))
                current = int(remaining[k])
                left_at[current] = step
                selected.append(current)
                remaining = np.delete(remaining, k)
            dropped_max.append(dropped)
            kept_min.append(kept)
            step += 1
        run = _Path(
            selected=np.asarray(selected, dtype=np.intp),
            dropped_max=np.asarray(dropped_max),
            kept_min=np.asarray(kept_min),
            left_at=left_at,
            complete=remaining.size == 0,
        )
        self._paths = [*self._paths[-(KEPT_RUNS - 1) :], run]
        return run.selected.copy()

    def _longest_prefix(self, dmin: float) -> tuple[_Path | None, int]:
        best: tuple[_Path | None, int] = (None, 0)
        for path in self._paths:
            steps = path.repeated_steps(dmin)
            if steps > best[1]:
                best = (path, steps)
        return best

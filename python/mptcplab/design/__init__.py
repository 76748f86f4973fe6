"""Experimental designs: where in the factor space to run the experiments.

Every engine samples the unit cube [0, 1]^d and returns an (n, d) numpy array; turning unit
coordinates into factor values is a separate, pure step. Randomised engines take a keyword-only
``rng`` (an integer seed or a ``numpy.random.Generator``) and give the same design for the same
seed.

The pieces, one file each:

- ``factors``: :class:`Factor` (continuous, optionally log scale; integer; categorical levels),
  :func:`scale` from unit points to a table of factor values and :func:`unscale` back.
- ``wsp``: the WSP space-filling design (Santiago, Claeys-Bruno & Sergent 2012), a greedy packing
  of a scrambled Sobol' candidate set with a minimum distance found by bisection to give n points.
- ``lhs``: Latin hypercubes and maximin LHS by simulated annealing on Morris-Mitchell's phi_p
  (DiceDesign's maximinSA_LHS).
- ``sobol``: scrambled Sobol' sequences and uniform random designs.
- ``factorial``: full factorial and two-level fractional factorial 2^(k-p) designs ("D=ABC").
- ``quality``: mindist, phi_p, coverage, mesh ratio, minimum-spanning-tree criteria and the
  centred, wrap-around and star L2 discrepancies, for the design and its 2-D projections.
- ``crossing``: :func:`cross` runs every combination of qualitative levels on the same points.
- ``sensitivity``: percentiles of a metric across several designs, and their relative spread.
- ``generate``: :func:`generate` picks an engine by name ("wsp", "lhs", "sobol", "random",
  "factorial") for campaign files.

Example::

    from mptcplab.design import Factor, wsp, scale, cross, quality
    factors = [Factor.continuous("capacity_mbps", 0.1, 100, log=True),
               Factor.continuous("rtt_ms", 0, 50)]
    points = wsp(len(factors), 200, rng=1)
    runs = cross(scale(points, factors), {"cc": ["lia", "olia"]})
    print(quality(points))
"""

from .crossing import cross
from .factorial import fractional_factorial, full_factorial
from .factors import Factor, scale, unscale
from .generate import generate
from .lhs import AnnealingResult, anneal_maximin, lhs, maximin_lhs
from .quality import (
    centered_l2_discrepancy,
    coverage,
    l2_star_discrepancy,
    mesh_ratio,
    mindist,
    mst_criteria,
    phi_p,
    quality,
    wraparound_l2_discrepancy,
)
from .sensitivity import sensitivity
from .sobol import sobol, uniform_random
from .wsp import WSPResult, wsp, wsp_design, wsp_search, wsp_select

__all__ = [
    "AnnealingResult",
    "Factor",
    "WSPResult",
    "anneal_maximin",
    "centered_l2_discrepancy",
    "coverage",
    "cross",
    "fractional_factorial",
    "full_factorial",
    "generate",
    "l2_star_discrepancy",
    "lhs",
    "maximin_lhs",
    "mesh_ratio",
    "mindist",
    "mst_criteria",
    "phi_p",
    "quality",
    "scale",
    "sensitivity",
    "sobol",
    "uniform_random",
    "unscale",
    "wraparound_l2_discrepancy",
    "wsp",
    "wsp_design",
    "wsp_search",
    "wsp_select",
]

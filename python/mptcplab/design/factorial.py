"""Full factorial designs and two-level fractional factorial designs 2^(k-p), in [0, 1]^k.

Sources: G. E. P. Box, J. S. Hunter, W. G. Hunter, "Statistics for Experimenters", 2nd ed., Wiley
2005, ch. 5-6 (standard order, generators and defining relations); D. C. Montgomery, "Design and
Analysis of Experiments", ch. 8 (factor letters A, B, ... skipping I, which names the identity
column). Levels are coded 0 (low) and 1 (high) so the designs share the unit cube with the
space-filling ones; in the +-1 coding a generator ``D=ABC`` means column D is the product of
columns A, B and C.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Sequence

import numpy as np

from ._common import MAX_POINTS, check_count

FACTOR_LETTERS = "ABCDEFGHJKLMNOPQRSTUVWXYZ"
_GENERATOR = re.compile(r"^\s*([A-Za-z])\s*=\s*([+-]?)\s*([A-Za-z]+)\s*$")


def full_factorial(levels: int | Sequence[int], *, d: int | None = None) -> np.ndarray:
    """Every combination of equally spaced levels, shape (prod(levels), len(levels)).

    ``levels[k]`` levels of factor k sit at ``0, 1/(L-1), ..., 1``. Rows are in standard (Yates)
    order: the first factor changes fastest. An integer ``levels`` with ``d`` means the same number
    of levels for each of ``d`` factors.
    """
    if isinstance(levels, int | np.integer) and not isinstance(levels, bool):
        if d is None:
            raise ValueError("levels: an integer number of levels needs d (the number of factors)")
        counts = [int(levels)] * check_count("d", d)
    elif isinstance(levels, str | bytes) or not hasattr(levels, "__iter__"):
        # A string is iterable too: 'abc' must not read as three factors.
        raise ValueError(
            f"levels: expected an integer or a list of integers (one per factor), got {levels!r}"
        )
    else:
        counts = list(levels)
        if d is not None and len(counts) != d:
            raise ValueError(f"levels: {len(counts)} entries for d = {d} factors")
    if not counts:
        raise ValueError("levels: expected at least one factor")
    for k, count in enumerate(counts):
        if isinstance(count, bool) or not isinstance(count, int | np.integer) or count < 2:
            raise ValueError(
                f"levels: factor {k} needs an integer number of levels >= 2, got {count!r}"
            )
    size = 1
    for count in counts:
        size *= int(count)
        if size > MAX_POINTS:
            raise ValueError(
                f"levels: the product of the factors' levels is more than the {MAX_POINTS} "
                "points a design may have"
            )
    axes = [np.linspace(0.0, 1.0, int(count)) for count in counts]
    # itertools.product varies its last argument fastest; reverse so the first factor does.
    rows = itertools.product(*reversed(axes))
    return np.array([row[::-1] for row in rows], dtype=float)


def _parse_generator(text: str, letters: str, k: int) -> tuple[str, int, str]:
    if not isinstance(text, str):
        raise ValueError(f"generator {text!r}: expected a string such as 'D=ABC'")
    match = _GENERATOR.match(text)
    if match is None:
        raise ValueError(f"generator {text!r}: expected the form 'D=ABC' (or 'D=-ABC')")
    target, sign, word = match.group(1).upper(), match.group(2), match.group(3).upper()
    for letter in target + word:
        if letter not in letters:
            raise ValueError(
                f"generator {text!r}: factor {letter!r} is not one of the k = {k} factors "
                f"{', '.join(letters)}"
            )
    if len(set(word)) != len(word):
        raise ValueError(f"generator {text!r}: a factor appears twice in {word!r}")
    return target, -1 if sign == "-" else 1, word


def fractional_factorial(k: int, generators: Sequence[str]) -> np.ndarray:
    """Two-level fractional factorial 2^(k-p) with ``p = len(generators)``, points at 0/1.

    Factors are named A, B, C, ... (I skipped). Each generator such as ``"D=ABC"`` or ``"E=-AB"``
    defines one factor as the (signed) product of basic factors, i.e. factors that no generator
    defines. Columns follow the letter order; rows are the full factorial of the basic factors in
    standard order. Without generators this is the full 2^k factorial.
    """
    k = check_count("k", k)
    if k > len(FACTOR_LETTERS):
        raise ValueError(f"k: at most {len(FACTOR_LETTERS)} factors are named, got {k}")
    if generators is None:
        generators = []
    if isinstance(generators, str):
        generators = [generators]
    if not isinstance(generators, Sequence):
        raise ValueError(
            f"generators: expected a list of strings such as ['D=ABC'], got {generators!r}"
        )
    letters = FACTOR_LETTERS[:k]
    parsed = [_parse_generator(g, letters, k) for g in generators]
    defined = [target for target, _, _ in parsed]
    if len(set(defined)) != len(defined):
        dupes = sorted({t for t in defined if defined.count(t) > 1})
        raise ValueError(f"generators: factor(s) {', '.join(dupes)} defined more than once")
    basic = [letter for letter in letters if letter not in defined]
    if not basic:
        raise ValueError(f"generators: all {k} factors are generated; at least one must be basic")
    if 2 ** len(basic) > MAX_POINTS:
        raise ValueError(
            f"k: 2^{len(basic)} runs for {len(basic)} basic factors (k = {k} with "
            f"{len(parsed)} generator(s)) is more than the {MAX_POINTS} points a design may have; "
            "add generators"
        )
    words: dict[str, str] = {}
    for (target, _, word), text in zip(parsed, generators, strict=True):
        if target in word:
            raise ValueError(f"generator {text!r}: {target} cannot be defined from itself")
        # A one-letter word copies a factor; two generators with one word give two copies of a
        # column (or its mirror): in either case two factors' effects cannot be told apart.
        if len(word) < 2:
            raise ValueError(
                f"generator {text!r}: {target} would repeat {word} (a generator multiplies at "
                "least two basic factors)"
            )
        if (same := words.setdefault("".join(sorted(word)), text)) != text:
            raise ValueError(
                f"generators {same!r} and {text!r}: the two factors would have the same column "
                "(up to sign)"
            )
        derived = [letter for letter in word if letter not in basic]
        if derived:
            raise ValueError(
                f"generator {text!r}: {', '.join(derived)} is itself generated; "
                f"write generators in terms of the basic factors {', '.join(basic)}"
            )
    base = 2.0 * full_factorial(2, d=len(basic)) - 1.0
    columns = {letter: base[:, i] for i, letter in enumerate(basic)}
    for target, sign, word in parsed:
        columns[target] = sign * np.prod([columns[letter] for letter in word], axis=0)
    coded = np.column_stack([columns[letter] for letter in letters])
    return (coded + 1.0) / 2.0

"""How a number given in a scenario is written back in a message about it: the Python half of
crates/mpsim/src/number_text.rs, so that a problem reads the same from either side.

Shortest round-trip digits with no trailing ``.0``, in decimal from 1e-4 to 1e16 in magnitude
and in Rust's exponent form outside (``8``, ``0.5``, ``-1e300``, ``1.5e-7``, ``inf``, ``NaN``):
a capacity of ``-1e300`` once came back as a minus sign and 301 digits. Python's ``repr``
switches to its exponent form at the same magnitudes as the Rust side.
"""

from __future__ import annotations

import math


def number_text(v: float) -> str:
    if math.isnan(v):
        return "NaN"
    if math.isinf(v):
        return "inf" if v > 0 else "-inf"
    text = repr(float(v))
    mantissa, exponent_mark, exponent = text.partition("e")
    if exponent_mark:
        return f"{mantissa.removesuffix('.0')}e{int(exponent)}"
    return text.removesuffix(".0")

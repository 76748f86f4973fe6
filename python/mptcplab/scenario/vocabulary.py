"""The words and limits of a scenario that the command line needs before any scenario is read:
the trace kinds and the shortest and longest run. They live apart from the model
(``model.py``, which re-exports them) because the model needs pydantic, and every ``mptcplab``
command, ``--help`` included, builds its options from these.
"""

from __future__ import annotations

from typing import Literal

TraceKind = Literal["cwnd", "ssthresh", "srtt", "rwnd", "queue", "blocks"]

# Longest run, seconds (crates/mpsim/src/scenario.rs, MAX_DURATION_S): the simulator's clock
# holds nanoseconds in 64 bits, about 584 years.
MAX_DURATION_S = 1e10
# Shortest run, seconds (scenario.rs, MIN_DURATION_S): the report's rates divide by the run.
MIN_DURATION_S = 1e-3

"""The version of the run metrics' definitions: a fingerprint of the code that computes them
(:func:`mptcplab.analysis.metrics.run_metrics` and the modules it calls).

A campaign's store keeps each run's metrics as they were computed when it ran, beside its
report. Metric definitions change without the simulator changing (and so without the runs'
keys changing): a campaign resumed across such a change would set old values beside new ones.
The store records the fingerprint its metrics were computed with, and ``mptcplab run``
recomputes them all from the stored reports when the code's differs.
"""

from __future__ import annotations

import functools
import hashlib
from pathlib import Path

__all__ = ["metrics_fingerprint"]

#: The modules whose code decides a run's metrics (this folder's).
_SOURCES = ("metrics", "fairshare", "capacity_bound", "recovery", "_checks")


@functools.cache
def metrics_fingerprint() -> str:
    """16 hex digits of the SHA-256 of those modules' source."""
    digest = hashlib.sha256()
    folder = Path(__file__).parent
    for name in _SOURCES:
        digest.update((folder / f"{name}.py").read_bytes())
    return digest.hexdigest()[:16]

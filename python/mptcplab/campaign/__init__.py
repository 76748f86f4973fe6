"""Campaigns: factors × design × scenario template × replications, run on a backend and stored.

- :func:`load` reads and validates a campaign file (``spec``);
- :func:`build_plan` turns it into runs with deterministic seeds and content-hash keys (``plan``);
- :func:`run_campaign` executes the runs the store does not hold yet (``runner``), on a local
  process pool or a Ray cluster (``executors``), with any registered backend (``backends``);
- :class:`Store` is the SQLite file that keeps every finished run (``store``).

A script that calls :func:`run_campaign` must do so under ``if __name__ == "__main__":``: the
local workers start by running the main script again (multiprocessing's ``spawn``), and a call
outside the guard is refused before the store is touched. A notebook needs no guard.

Names are imported on first use, so a worker process that only executes runs does not load
pandas, scipy or the design engines.
"""

from __future__ import annotations

import importlib
from typing import Any

_EXPORTS = {
    "Campaign": "mptcplab.campaign.spec",
    "load": "mptcplab.campaign.spec",
    "Plan": "mptcplab.campaign.plan",
    "build_plan": "mptcplab.campaign.plan",
    "CampaignInterrupted": "mptcplab.campaign.runner",
    "RunSummary": "mptcplab.campaign.runner",
    "run_campaign": "mptcplab.campaign.runner",
    "Store": "mptcplab.campaign.store",
}

__all__ = sorted(_EXPORTS)


def __getattr__(name: str) -> Any:
    if name in _EXPORTS:
        return getattr(importlib.import_module(_EXPORTS[name]), name)
    raise AttributeError(f"module 'mptcplab.campaign' has no attribute {name!r}")


def __dir__() -> list[str]:
    # Lazy names are not module globals yet; list them so dir() and notebook completion see them.
    return sorted({*globals(), *_EXPORTS})

"""Campaigns: factors × design × scenario template × replications, run on a backend and stored.

- :func:`load` reads and validates a campaign file (``spec``);
- :func:`build_plan` turns it into runs with deterministic seeds and content-hash keys (``plan``);
- :func:`run_campaign` executes the runs the store does not hold yet (``runner``), on a local
  process pool or a Ray cluster (``executors``), with any registered backend (``backends``);
- :class:`Store` is the SQLite file that keeps every finished run (``store``).
"""

from mptcplab.campaign.plan import Plan, build_plan
from mptcplab.campaign.runner import CampaignInterrupted, RunSummary, run_campaign
from mptcplab.campaign.spec import Campaign, load
from mptcplab.campaign.store import Store

__all__ = [
    "Campaign",
    "CampaignInterrupted",
    "Plan",
    "RunSummary",
    "Store",
    "build_plan",
    "load",
    "run_campaign",
]

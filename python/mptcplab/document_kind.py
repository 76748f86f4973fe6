"""Telling a scenario document from a campaign document by its top-level keys.

Both are TOML, and a scenario given where a campaign is expected (or the other way round)
would otherwise fail with one "unknown key" error per top-level key; the loaders use this to
say in one line which kind of file it is and which command runs it.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

__all__ = [
    "CAMPAIGN_KEYS",
    "SCENARIO_KEYS",
    "looks_like_campaign",
    "looks_like_scenario",
    "written_keys",
]

# Keys only one of the two kinds has at its top level (both have `seed`).
SCENARIO_KEYS = ("links", "flows")
CAMPAIGN_KEYS = ("scenario", "design", "factors", "replications", "backend", "backends")


def looks_like_campaign(data: Mapping[str, Any]) -> bool:
    """A campaign's keys and none of a scenario's."""
    return any(k in data for k in CAMPAIGN_KEYS) and not any(k in data for k in SCENARIO_KEYS)


def looks_like_scenario(data: Mapping[str, Any]) -> bool:
    """A scenario's keys and none of a campaign's."""
    return any(k in data for k in SCENARIO_KEYS) and not any(k in data for k in CAMPAIGN_KEYS)


def written_keys(data: Mapping[str, Any], keys: Iterable[str]) -> str:
    """The ``keys`` that ``data`` has, as the file writes them: ``[design]``, ``[[links]]``,
    ``replications``."""

    def written(key: str) -> str:
        value = data[key]
        if isinstance(value, dict):
            return f"[{key}]"
        if isinstance(value, list) and value and all(isinstance(v, dict) for v in value):
            return f"[[{key}]]"
        return key

    found = [written(k) for k in keys if k in data]
    return ", ".join(found[:-1]) + " and " + found[-1] if len(found) > 1 else "".join(found)

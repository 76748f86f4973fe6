"""Scenario templates: functions with keyword-only parameters that return a :class:`Scenario`
modelled on a published study, and a registry so campaign files can name them.

    from mptcplab.scenario import templates
    s = templates.two_path(capacity_mbps=(10, 2), rtt_ms=(20, 150))
    s = templates.make("shared_ap", n1=30)          # by name, as a campaign does

Every template documents its parameters (units, defaults) and the source it comes from.
"""

from __future__ import annotations

import difflib
import inspect
from typing import Any

from mptcplab.errors import UserError
from mptcplab.scenario.model import Scenario
from mptcplab.scenario.templates._common import Template, red_profile
from mptcplab.scenario.templates.conext13 import single_path, three_bottleneck, two_path
from mptcplab.scenario.templates.khalili import multihomed_isp, shared_ap, two_ap
from mptcplab.scenario.templates.nsdi12 import wifi_3g
from mptcplab.scenario.templates.walid import responsiveness

__all__ = [
    "TEMPLATES",
    "make",
    "multihomed_isp",
    "parameters",
    "red_profile",
    "responsiveness",
    "shared_ap",
    "single_path",
    "three_bottleneck",
    "two_ap",
    "two_path",
    "wifi_3g",
]

TEMPLATES: dict[str, Template] = {
    "two_path": two_path,
    "single_path": single_path,
    "three_bottleneck": three_bottleneck,
    "shared_ap": shared_ap,
    "multihomed_isp": multihomed_isp,
    "two_ap": two_ap,
    "wifi_3g": wifi_3g,
    "responsiveness": responsiveness,
}


def _lookup(name: str) -> Template:
    try:
        return TEMPLATES[name]
    except (KeyError, TypeError):
        known = ", ".join(TEMPLATES)
        close = difflib.get_close_matches(str(name), list(TEMPLATES), n=1)
        hint = f" (did you mean '{close[0]}'?)" if close else ""
        raise UserError(
            f"unknown template {name!r}{hint}; templates are: {known}", field="template"
        ) from None


def parameters(name: str) -> dict[str, Any]:
    """The parameters template ``name`` accepts, with their defaults."""
    sig = inspect.signature(_lookup(name))
    return {p.name: p.default for p in sig.parameters.values()}


def make(name: str, **params: Any) -> Scenario:
    """Build the scenario of template ``name``; unknown templates and parameters raise
    :class:`UserError` listing what is accepted."""
    accepted = parameters(name)
    for key in params:
        if key not in accepted:
            close = difflib.get_close_matches(key, list(accepted), n=1)
            hint = f" (did you mean '{close[0]}'?)" if close else ""
            raise UserError(
                f"template {name} has no parameter {key!r}{hint}; "
                f"parameters are: {', '.join(accepted)}",
                field=key,
            )
    return _lookup(name)(**params)

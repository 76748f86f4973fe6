"""The notebook entry points: every advertised name resolves and is listed by dir()."""

from __future__ import annotations

import importlib

import pytest

MODULES = [
    "mptcplab.design",
    "mptcplab.sim",
    "mptcplab.emu",
    "mptcplab.campaign",
    "mptcplab.analysis",
    "mptcplab.perf",
]


@pytest.mark.parametrize("name", MODULES)
def test_every_advertised_name_resolves_and_is_listed(name: str) -> None:
    module = importlib.import_module(name)
    assert module.__all__
    for attr in module.__all__:
        assert getattr(module, attr) is not None, f"{name}.{attr}"
    # Tab completion in a notebook lists dir(), which must include names imported lazily.
    assert set(module.__all__) <= set(dir(module))


@pytest.mark.parametrize("name", ["mptcplab.campaign", "mptcplab.analysis"])
def test_an_unknown_name_is_an_attribute_error(name: str) -> None:
    module = importlib.import_module(name)
    with pytest.raises(AttributeError, match="no attribute 'nothing_here'"):
        module.nothing_here  # noqa: B018

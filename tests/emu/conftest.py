"""Fixtures of the emulator tests. Tests that run the kernel skip, with the reason, when this
machine cannot (not root, no TUN, no namespaces, MPTCP off, programs not built); on a capable
machine they run for real."""

from __future__ import annotations

import pytest

from mptcplab import emu


@pytest.fixture(scope="session")
def emulator() -> None:
    ok, reason = emu.available()
    if not ok:
        pytest.skip(f"emulator unavailable: {reason}")

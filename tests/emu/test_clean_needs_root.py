"""`emu.clean()` as a user other than root is refused before it touches anything: such a user
cannot open a live run's lock, so it took every run for dead, reported removing directories it
could not remove, or failed with a PermissionError."""

from __future__ import annotations

import os

import pytest

from mptcplab import emu
from mptcplab.backends.emu import rundir


def test_clean_without_root_is_refused_before_it_looks_at_any_run(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(os, "geteuid", lambda: 1000)

    def touched(*args: object) -> None:
        raise AssertionError("clean looked at runs without root")

    monkeypatch.setattr(rundir, "live_run_ids", touched)
    monkeypatch.setattr(rundir, "our_processes", touched)
    with pytest.raises(emu.EmulatorError, match="needs root"):
        emu.clean()

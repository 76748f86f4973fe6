"""What the emulator needs before it starts, against a described machine (no system access):
MPTCP in the kernel, but not enabled in the caller's own namespace, since every run's
namespaces enable it; and the sysctl program it sets them with."""

from __future__ import annotations

import dataclasses
import shutil

import pytest

from mptcplab.backends.emu import checks, kernel, runner
from mptcplab.backends.emu.netns import EmulatorError

MACHINE = kernel.KernelInfo(
    release="6.18",
    root=True,
    tun=True,
    netns=True,
    mptcp_enabled=False,
    available_cc=("reno", "cubic"),
    allowed_cc=("reno", "cubic"),
    loadable_cc=(),
    schedulers=("default",),
    coupled_ok=False,
    coupled_reason="bpf/build is not built",
)


@pytest.fixture(autouse=True)
def _binaries_built(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(runner, "require_binary", lambda name: name)


def _without_sysctl(monkeypatch: pytest.MonkeyPatch) -> None:
    which = shutil.which
    monkeypatch.setattr(
        shutil, "which", lambda name, *a, **k: None if name == "sysctl" else which(name, *a, **k)
    )


def test_mptcp_disabled_in_the_callers_namespace_does_not_stop_a_run() -> None:
    runner.preflight(MACHINE)  # net.mptcp.enabled = 0 here: no refusal


def test_a_kernel_without_mptcp_or_a_machine_without_sysctl_is_refused(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    with pytest.raises(EmulatorError, match="a kernel with MPTCP"):
        runner.preflight(dataclasses.replace(MACHINE, mptcp_enabled=None))
    _without_sysctl(monkeypatch)
    with pytest.raises(EmulatorError, match=r"sysctl \(procps\)"):
        runner.preflight(MACHINE)


def test_doctor_reports_both(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(kernel, "probe", lambda: MACHINE)
    monkeypatch.setattr(checks, "idle_cores", lambda: 2.0)
    _without_sysctl(monkeypatch)
    found = {c.name: c for c in checks.run_checks()}
    assert found["MPTCP"].ok and "each run's namespaces enable it" in found["MPTCP"].found
    assert not found["sysctl"].ok and found["sysctl"].required
    assert "procps" in found["sysctl"].fix

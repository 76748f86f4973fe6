"""Run a scenario on the real Linux kernel in emulated networks.

    from mptcplab import emu
    report = emu.run("scenarios/default.toml")     # or a Scenario, or a dict
    report["flows"][0]["goodput_mbps"], report["fidelity"]["emulation_bottleneck"]

The report has the simulator's fields (see :mod:`mptcplab.results`) plus two blocks:
``fidelity`` (per link: configured vs achieved rate while busy, release lateness; linkem's CPU;
``emulation_bottleneck`` with the reasons when the emulator rather than the network shaped the
result) and ``backend`` (kernel release, the congestion control each flow ran as read back from
the kernel, connect times, notes on what the kernel does differently from the simulator's
model).

Needs root, /dev/net/tun, network namespaces, MPTCP and the native programs (``make build``);
``mptcplab doctor`` says what is missing. Runs do not interfere: each has its own namespaces.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import Any

from mptcplab import __version__
from mptcplab.backends.emu import cleanup, kernel
from mptcplab.backends.emu.netns import EmulatorError
from mptcplab.backends.emu.runner import Progress, preflight, run_scenario
from mptcplab.errors import UserError
from mptcplab.scenario.load import field_line, resolve_scenario, with_overrides
from mptcplab.scenario.model import Scenario

__all__ = ["EmulatorError", "Progress", "UserError", "available", "clean", "run"]


def available() -> tuple[bool, str]:
    """Whether this machine can run the emulator, and if not, why."""
    try:
        preflight(kernel.probe())
    except EmulatorError as exc:
        return False, str(exc)
    return True, "ok"


def run(
    scenario: Scenario | dict[str, Any] | str | os.PathLike[str],
    *,
    seed: int | None = None,
    duration_s: float | None = None,
    trace: Sequence[str] | None = None,
    progress: Progress | None = None,
) -> dict[str, Any]:
    """Emulate ``scenario`` (a :class:`Scenario`, plain data or a .toml/.json path) and return
    the report as plain data. ``seed``, ``duration_s`` and ``trace`` replace the scenario's
    values when given; ``progress``, when given, is called as ``progress(stage, traffic_s,
    duration_s)`` at each stage and every half second of traffic. Raises :class:`UserError`
    for scenarios the kernel cannot run and :class:`EmulatorError` when the machine refuses a
    step."""
    if progress is not None and not callable(progress):
        # Found before the run, not when it first reports (or at its end).
        raise TypeError(f"progress: expected a callable, got {type(progress).__name__}")
    model, file, text, syntax = resolve_scenario(scenario)
    model = with_overrides(model, seed=seed, duration_s=duration_s, trace=trace)
    try:
        return run_scenario(model, version=__version__, progress=progress)
    except UserError as exc:
        # What the kernel cannot run is refused by field; a file's field has a line there.
        if exc.file is None and exc.field and file is not None:
            line = field_line(exc.field, text, syntax)
            raise UserError(
                exc.detail, file=file, line=line, field=exc.field, also=exc.also
            ) from None
        raise


def clean(*, force: bool = False) -> list[str]:
    """Remove what crashed or killed runs left (namespaces, processes, run directories);
    runs still alive are left alone unless ``force``, and whatever under the run root is not a
    run always is. Returns one line per thing removed or left alone."""
    return cleanup.clean_all(force=force)

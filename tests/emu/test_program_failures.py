"""A traffic program that ends badly is named by what it is and how it ended. After
`mptcplab clean --force` tore a run down, its error read "server-0-cfg failed: " and nothing
more."""

from __future__ import annotations

import signal
from pathlib import Path
from types import SimpleNamespace

from mptcplab.backends.emu.programs import Program


def _program(tmp_path: Path, argv: list[str]) -> Program:
    rundir = SimpleNamespace(path=tmp_path, record_pid=lambda pid, name: None)
    return Program(rundir, "server-0-cfg", argv, "the traffic server of flow f")  # type: ignore[arg-type]


def test_a_program_killed_by_a_signal_says_which(tmp_path: Path) -> None:
    program = _program(tmp_path, ["sleep", "30"])
    program.signal(signal.SIGTERM)
    status = program.wait(10)
    assert str(program.failure(status)) == "the traffic server of flow f was killed by SIGTERM"


def test_a_program_that_exits_with_an_error_says_it_and_its_last_words(tmp_path: Path) -> None:
    program = _program(tmp_path, ["sh", "-c", "echo 'bind: address in use' >&2; exit 3"])
    status = program.wait(10)
    assert str(program.failure(status)) == (
        "the traffic server of flow f exited with status 3: bind: address in use"
    )

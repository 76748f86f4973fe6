"""The htsim side-by-side benchmark's plumbing: reading the Rust bench's table and finding htsim."""

from __future__ import annotations

import importlib.util
import shutil
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import pytest

SCRIPT = Path(__file__).resolve().parents[2] / "scripts" / "htsim_reference.py"


@pytest.fixture(scope="module")
def reference() -> ModuleType:
    spec = importlib.util.spec_from_file_location("htsim_reference", SCRIPT)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up there
    spec.loader.exec_module(module)
    return module


def test_bench_rows_are_read_by_column_name(reference: ModuleType) -> None:
    out = (
        "noise before the table\n"
        "| case | data pkts | runs | wall s |\n"
        "|---|---:|---:|---:|\n"
        "| B: one case | 59605 | 7 | 0.0102 |\n"
    )
    rows = reference.parse_bench_table(out)
    assert rows == [{"case": "B: one case", "data pkts": "59605", "runs": "7", "wall s": "0.0102"}]
    assert reference.parse_bench_table("no table at all\n") == []


def test_a_directory_that_is_not_htsim_is_refused_by_name(
    reference: ModuleType, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HTSIM_DIR", str(tmp_path))
    with pytest.raises(reference.Unavailable, match=f"HTSIM_DIR={tmp_path} is not a csg-htsim"):
        reference.locate()


@pytest.mark.parametrize("script", ["bench.py", "htsim_reference.py"])
def test_help_prints_usage_without_running_the_benchmarks(script: str) -> None:
    # Before the scripts parsed their arguments, `--help` started the whole benchmark (minutes)
    # and rewrote BENCHMARKS.md; now it prints usage and exits at once.
    path = SCRIPT.parent / script
    done = subprocess.run(
        [sys.executable, str(path), "--help"], capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith(f"usage: {script}")
    assert "HTSIM_DIR" in done.stdout


def test_an_unknown_option_is_refused_with_usage() -> None:
    done = subprocess.run(
        [sys.executable, str(SCRIPT.parent / "bench.py"), "--no-campain"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 2
    assert "unrecognized arguments: --no-campain" in done.stderr


def test_the_instruction_count_is_read_from_callgrinds_collected_line(
    reference: ModuleType,
) -> None:
    stderr = (
        "==16893== Callgrind, a call-graph generating cache profiler\n"
        "==16893== Events    : Ir\n"
        "==16893== Collected : 973153028\n"
        "==16893== I   refs:      973,153,028\n"
    )
    assert reference.callgrind_instructions(stderr) == 973_153_028
    with pytest.raises(reference.Unavailable, match="no instruction count"):
        reference.callgrind_instructions("==1== Events    : Ir\n")


@pytest.mark.skipif(shutil.which("valgrind") is None, reason="valgrind is not installed")
def test_instructions_are_counted_under_callgrind(reference: ModuleType) -> None:
    # A real run: `true` executes some instructions (the dynamic loader's at least), a
    # command that fails is reported by name.
    assert reference.count_instructions(["true"]) > 1_000
    with pytest.raises(reference.Unavailable, match="valgrind on `false` failed"):
        reference.count_instructions(["false"])

"""`make bench` rewrites BENCHMARKS.md but keeps its hand-written part (one-off measurements
with their command and date) from the heading scripts/bench.py names on."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

SCRIPTS = Path(__file__).resolve().parents[2] / "scripts"


def load_bench():
    sys.path.insert(0, str(SCRIPTS))  # bench.py imports its sibling htsim_reference
    try:
        spec = importlib.util.spec_from_file_location("bench_script", SCRIPTS / "bench.py")
        assert spec is not None and spec.loader is not None
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        return module
    finally:
        sys.path.remove(str(SCRIPTS))


def test_the_hand_written_part_is_kept_and_nothing_else(tmp_path: Path) -> None:
    bench = load_bench()
    path = tmp_path / "BENCHMARKS.md"
    assert bench.kept_section(path) == ""
    hand = f"{bench.KEPT_HEADING}\n\nPGO: 3-7 % on A.\n"
    path.write_text(f"# Benchmarks\n\n## Simulator throughput\n\n| a |\n\n{hand}")
    assert bench.kept_section(path) == hand
    path.write_text("# Benchmarks\n\n## Simulator throughput\n")
    assert bench.kept_section(path) == ""

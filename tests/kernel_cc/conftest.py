"""Fixtures for the kernel congestion-control tests: build, requirements, BPF object listing.

Tests that touch the kernel skip with the reason when this machine cannot run them (not root,
no BTF or struct_ops, toolchain missing); on a capable machine they run for real.
"""

from __future__ import annotations

import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from mptcplab.backends import kernel_cc

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="session")
def bpf_built() -> Path:
    """Builds bpf/ (installing the toolchain first when root and missing) or skips."""
    ok, reason = kernel_cc.available()
    if not ok:
        pytest.skip(reason)
    proc = subprocess.run(
        ["make", "--no-print-directory", "-C", str(REPO / "bpf")],
        capture_output=True,
        text=True,
        timeout=900,
        check=False,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    build = REPO / "bpf" / "build"
    if not (build / "mptcplab-cc").is_file():
        pytest.skip(f"bpf/ was not built: {proc.stderr.strip()}")
    return build


@pytest.fixture
def clean_kernel(bpf_built: Path) -> Iterator[None]:
    """Each test starts and ends with none of the three registered."""
    kernel_cc.unload_all()
    yield
    kernel_cc.unload_all()

"""Registering and unregistering the BPF congestion controls, and cleaning up after a killed
loader: afterwards neither the names nor any of their maps or programs remain (bpftool)."""

from __future__ import annotations

import fcntl
import hashlib
import json
import os
import shutil
import signal
import subprocess
from pathlib import Path

import pytest
from kcc_helpers import in_force, our_bpf_objects, registered_ccs, wait_until_no_bpf_objects

from mptcplab.backends import kernel_cc
from mptcplab.errors import UserError

pytestmark = pytest.mark.root


def test_a_source_newer_than_its_object_is_rebuilt_before_loading(
    bpf_built: Path, clean_kernel: None, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An edited source is what a run means to load: the stale object is not registered."""
    bpf = tmp_path / "bpf"
    shutil.copytree(bpf_built.parent, bpf, symlinks=True)
    monkeypatch.setenv("MPTCPLAB_BPF_DIR", str(bpf))
    built_at = os.stat(bpf / "build" / "mptcp_lia.bpf.o").st_mtime
    header = bpf / "src" / "mptcp_cc_math.h"
    os.utime(header, (built_at + 1, built_at + 1))

    info = kernel_cc.ensure_loaded(["mptcp_lia"])

    obj = bpf / "build" / "mptcp_lia.bpf.o"
    assert obj.stat().st_mtime > built_at + 1
    assert info["mptcp_lia"]["object_sha256"] == hashlib.sha256(obj.read_bytes()).hexdigest()


def test_unknown_name_is_rejected_with_a_clear_message() -> None:
    with pytest.raises(UserError, match=r"mptcp_wvegas.*expected one of mptcp_lia"):
        kernel_cc.ensure_loaded(["mptcp_wvegas"])


def test_available_gives_a_reason() -> None:
    ok, reason = kernel_cc.available()
    if ok:
        assert reason == "ok"
    else:
        assert reason.strip()


def test_load_all_three_then_unload_leaves_nothing(bpf_built: Path, clean_kernel: None) -> None:
    assert not registered_ccs() & set(kernel_cc.NAMES)
    info = kernel_cc.ensure_loaded(kernel_cc.NAMES)

    assert set(info) == set(kernel_cc.NAMES)
    for name, entry in info.items():
        obj = bpf_built / f"{name}.bpf.o"
        assert entry["object_sha256"] == hashlib.sha256(obj.read_bytes()).hexdigest()
        assert entry["implementation"] == "kernel-bpf"
    assert set(kernel_cc.NAMES) <= registered_ccs()
    report = kernel_cc.status()
    for name in kernel_cc.NAMES:
        (instance,) = report[name]["instances"]
        assert report[name]["registered"]
        assert instance["state"] == "inuse"
        assert instance["config"] == {
            "count_per_segment": 0,
            "ssthresh_in_recovery": 1,
            "olia_min_ssthresh": 2,
        }
        assert instance["connections"] == []

    # Loading again with the same object and options keeps the registration.
    assert kernel_cc.ensure_loaded(["mptcp_olia"]) == {"mptcp_olia": info["mptcp_olia"]}
    assert kernel_cc.status()["mptcp_olia"]["instances"] == report["mptcp_olia"]["instances"]

    removed = kernel_cc.unload_all()
    assert sorted(removed) == sorted(kernel_cc.NAMES)
    assert not registered_ccs() & set(kernel_cc.NAMES)
    assert wait_until_no_bpf_objects() == []


def test_unload_asks_its_condition_under_the_loaders_lock(
    bpf_built: Path, clean_kernel: None
) -> None:
    kernel_cc.ensure_loaded(["mptcp_lia"])
    held: list[bool] = []

    def another_run_alive() -> bool:
        # flock conflicts between two opens of the file even in one process: if the unload
        # holds the lock, this open cannot take it.
        with open(kernel_cc._STATE_DIR / ".lock", "w") as lock:
            try:
                fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                held.append(True)
            else:
                held.append(False)
                fcntl.flock(lock, fcntl.LOCK_UN)
        return True

    assert kernel_cc.unload_all(unless=another_run_alive) == []
    assert held == [True]
    assert "mptcp_lia" in registered_ccs(), "a True answer must keep the registration"
    assert kernel_cc.unload_all(unless=lambda: False) == ["mptcp_lia"]
    assert not registered_ccs() & set(kernel_cc.NAMES)


def test_a_registration_live_holders_use_keeps_its_options(
    bpf_built: Path, clean_kernel: None
) -> None:
    alive = {"run-a"}
    kernel_cc.ensure_loaded(["mptcp_olia"], holder="run-a", holder_alive=alive.__contains__)
    first = in_force("mptcp_olia")
    assert first["config"]["olia_min_ssthresh"] == 2

    other = kernel_cc.CCOptions(olia_min_ssthresh=1)
    with pytest.raises(kernel_cc.RegistrationBusy) as busy:
        kernel_cc.ensure_loaded(
            ["mptcp_lia", "mptcp_olia"],
            options=other,
            holder="run-b",
            holder_alive=alive.__contains__,
        )
    assert (busy.value.name, busy.value.holders) == ("mptcp_olia", ["run-a"])
    assert in_force("mptcp_olia") == first
    assert "mptcp_lia" not in registered_ccs(), "a busy name must leave the others as they were"

    # The same options are shared with a second holder.
    kernel_cc.ensure_loaded(["mptcp_olia"], holder="run-b", holder_alive=alive.__contains__)
    assert in_force("mptcp_olia") == first

    # Once no holder is alive, other options replace the registration.
    alive.clear()
    kernel_cc.ensure_loaded(
        ["mptcp_olia"], options=other, holder="run-c", holder_alive=alive.__contains__
    )
    replaced = in_force("mptcp_olia")
    assert replaced["struct_ops_map_id"] != first["struct_ops_map_id"]
    assert replaced["config"]["olia_min_ssthresh"] == 1


def test_changed_options_reload_and_reach_the_kernel(bpf_built: Path, clean_kernel: None) -> None:
    kernel_cc.ensure_loaded(["mptcp_olia"])
    (first,) = kernel_cc.status()["mptcp_olia"]["instances"]
    options = kernel_cc.CCOptions(olia_min_ssthresh=1, count_per_segment=True)
    info = kernel_cc.ensure_loaded(["mptcp_olia"], options=options)

    assert info["mptcp_olia"]["options"]["olia_min_ssthresh"] == 1
    current = [
        inst for inst in kernel_cc.status()["mptcp_olia"]["instances"] if inst["state"] == "inuse"
    ]
    assert len(current) == 1
    assert current[0]["struct_ops_map_id"] != first["struct_ops_map_id"]
    assert current[0]["config"] == {
        "count_per_segment": 1,
        "ssthresh_in_recovery": 1,
        "olia_min_ssthresh": 1,
    }


def test_killed_loader_leaves_a_registration_that_the_cleaner_removes(
    bpf_built: Path, clean_kernel: None
) -> None:
    loader = subprocess.Popen(
        [str(bpf_built / "mptcplab-cc"), "load", "--wait", "mptcp_lia", "mptcp_balia"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert loader.stdout is not None
    loaded = json.loads(loader.stdout.readline())
    assert set(loaded["loaded"]) == {"mptcp_lia", "mptcp_balia"}
    os.kill(loader.pid, signal.SIGKILL)
    loader.wait(timeout=10)
    loader.stdout.close()
    assert loader.stderr is not None
    loader.stderr.close()

    # SIGKILL gives the loader no chance to unregister: the leftovers stay.
    assert {"mptcp_lia", "mptcp_balia"} <= registered_ccs()
    assert "map mptcp_lia" in our_bpf_objects()

    # A run that started meanwhile (the condition, asked under the lock) keeps them.
    assert kernel_cc.clean_leftovers(unless=lambda: True) == []
    assert {"mptcp_lia", "mptcp_balia"} <= registered_ccs()

    lines = kernel_cc.clean_leftovers(unless=lambda: False)
    assert any("mptcp_lia" in line for line in lines)
    assert any("mptcp_balia" in line for line in lines)
    assert not registered_ccs() & set(kernel_cc.NAMES)
    assert wait_until_no_bpf_objects() == []
    assert kernel_cc.clean_leftovers() == []


def test_loader_in_wait_mode_unregisters_on_sigterm(bpf_built: Path, clean_kernel: None) -> None:
    loader = subprocess.Popen(
        [str(bpf_built / "mptcplab-cc"), "load", "--wait", "mptcp_olia"],
        stdout=subprocess.PIPE,
        text=True,
    )
    assert loader.stdout is not None
    json.loads(loader.stdout.readline())
    assert "mptcp_olia" in registered_ccs()
    loader.send_signal(signal.SIGTERM)
    assert loader.wait(timeout=10) == 0
    loader.stdout.close()
    assert "mptcp_olia" not in registered_ccs()
    assert wait_until_no_bpf_objects() == []


@pytest.mark.parametrize(
    "args",
    [
        ["load"],
        ["load", "mptcp_nope"],
        ["load", "--olia-min-ssthresh", "3", "mptcp_olia"],
        ["unload", "cubic"],
        ["frobnicate"],
        [],
    ],
)
def test_loader_rejects_bad_usage_with_exit_code_2(bpf_built: Path, args: list[str]) -> None:
    proc = subprocess.run(
        [str(bpf_built / "mptcplab-cc"), *args], capture_output=True, text=True, timeout=30
    )
    assert proc.returncode == 2
    assert proc.stderr.strip()

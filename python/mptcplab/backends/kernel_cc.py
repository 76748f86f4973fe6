"""Coupled MPTCP congestion controls (LIA, OLIA, BALIA) in the running Linux kernel.

Upstream Linux MPTCP has no coupled congestion control; ``bpf/`` implements ``mptcp_lia``,
``mptcp_olia`` and ``mptcp_balia`` as BPF ``tcp_congestion_ops`` (spec §2.3-2.5, §2.8). Once
registered they are ordinary congestion-control names: a socket selects one with
``setsockopt(IPPROTO_TCP, TCP_CONGESTION, name)`` (an ``IPPROTO_MPTCP`` socket passes it to
every subflow) or a namespace sets ``net.ipv4.tcp_congestion_control``.

API (everything else here is private):

- :data:`NAMES` -- the three names.
- :func:`available` -> ``(ok, reason)``: can this machine load them (root, kernel BTF,
  struct_ops, MPTCP, build or toolchain present)? ``reason`` says what is missing.
- :func:`ensure_loaded` ``(names, *, options=None, holder=None, holder_alive=None)`` ->
  ``{name: {"object_sha256": ..., "implementation": "kernel-bpf", "options": {...}}}``:
  builds if needed and registers each name unless the same object with the same options is
  already registered. Raises :class:`KernelCCError` when it cannot, and
  :class:`RegistrationBusy` rather than change the options under a holder still alive.
- :func:`status` -> the loader's view: per name, whether it is registered, and for each
  registration (``instances``: the current one, plus earlier ones still held by open sockets)
  its state, options and MPTCP connections with their shared slots (one per subflow, with
  cwnd / srtt / loss interval).
- :func:`connection_slots` ``(name)`` -> ``{token: slots_used}``.
- :func:`unload_all` -> names unregistered; :func:`clean_leftovers` -> what it removed, for
  ``mptcplab clean`` (also after a killed loader or a crash).

Registrations are global to the kernel (all namespaces) and outlive the Python process; the
options apply to every socket using that name, so runs that need different options for the
same name must not overlap: each run names itself as a holder, and a registration that live
holders use is not replaced.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import json
import os
import shutil
import subprocess
from collections.abc import Callable, Iterable, Iterator
from dataclasses import asdict, dataclass
from functools import cache
from pathlib import Path
from typing import Any

from mptcplab.errors import UserError

NAMES: tuple[str, ...] = ("mptcp_lia", "mptcp_olia", "mptcp_balia")
IMPLEMENTATION = "kernel-bpf"

_BTF_PATH = Path("/sys/kernel/btf/vmlinux")
_AVAILABLE_CC_PATH = Path("/proc/sys/net/ipv4/tcp_available_congestion_control")
_MPTCP_ENABLED_PATH = Path("/proc/sys/net/mptcp/enabled")
_STATE_DIR = Path("/run/mptcplab/kernel_cc")
_LOADER_TIMEOUT_S = 120.0


class KernelCCError(RuntimeError):
    """The kernel congestion controls cannot be built, loaded or unloaded here."""


class RegistrationBusy(KernelCCError):
    """A registration cannot be replaced while holders still alive use it."""

    def __init__(self, name: str, holders: list[str]) -> None:
        super().__init__(f"{name} is in use with other options by {', '.join(holders)}")
        self.name = name
        self.holders = holders


@dataclass(frozen=True)
class CCOptions:
    """Run-time options of the BPF congestion controls (spec §2.8); defaults follow Linux.

    - ``count_per_segment``: one increase step per newly acknowledged segment (RFC 6356 /
      draft scaling by bytes acked) instead of one per ACK (Linux modules; delayed ACKs then
      halve the growth). Default ``False``.
    - ``ssthresh_in_recovery``: a subflow in fast recovery enters the aggregates with its
      ssthresh instead of its inflated cwnd (Linux OLIA). Default ``True``.
    - ``olia_min_ssthresh``: OLIA's ssthresh floor in segments with >= 2 active paths, 2
      (Linux) or 1 (draft-khalili §3). Default 2.
    """

    count_per_segment: bool = False
    ssthresh_in_recovery: bool = True
    olia_min_ssthresh: int = 2

    def loader_args(self) -> list[str]:
        args: list[str] = []
        if self.count_per_segment:
            args.append("--per-segment")
        if not self.ssthresh_in_recovery:
            args.append("--cwnd-in-recovery")
        args += ["--olia-min-ssthresh", str(self.olia_min_ssthresh)]
        return args


def bpf_dir() -> Path:
    """The ``bpf/`` folder of the source tree (override with ``MPTCPLAB_BPF_DIR``)."""
    override = os.environ.get("MPTCPLAB_BPF_DIR")
    if override:
        return Path(override)
    return Path(__file__).resolve().parents[3] / "bpf"


def _build_dir() -> Path:
    return bpf_dir() / "build"


def _loader_path() -> Path:
    return _build_dir() / "mptcplab-cc"


def _object_path(name: str) -> Path:
    return _build_dir() / f"{name}.bpf.o"


def _built() -> bool:
    return _loader_path().is_file() and all(_object_path(n).is_file() for n in NAMES)


def _toolchain_missing() -> list[str]:
    missing = [tool for tool in ("clang", "bpftool", "make", "cc") if shutil.which(tool) is None]
    if not Path("/usr/include/bpf/libbpf.h").is_file():
        missing.append("libbpf-dev")
    return missing


@cache
def _kernel_has_struct_ops_cc() -> bool:
    # The kernel describes each struct_ops type it can register as
    # "bpf_struct_ops_<type>" in its BTF.
    try:
        return b"bpf_struct_ops_tcp_congestion_ops" in _BTF_PATH.read_bytes()
    except OSError:
        return False


def available() -> tuple[bool, str]:
    """Whether the BPF congestion controls can be loaded here, and if not, why."""
    if os.geteuid() != 0:
        return False, "loading BPF congestion controls needs root (CAP_BPF, CAP_NET_ADMIN)"
    if not _BTF_PATH.is_file():
        return False, f"the kernel exposes no BTF ({_BTF_PATH} is missing)"
    if not _kernel_has_struct_ops_cc():
        return False, "the kernel cannot register BPF tcp_congestion_ops (no struct_ops)"
    if not _MPTCP_ENABLED_PATH.is_file():
        return False, "the kernel has no MPTCP support (net.mptcp missing)"
    if not _built():
        missing = _toolchain_missing()
        if missing:
            return False, (
                f"bpf/build is not built and the toolchain is missing ({', '.join(missing)}): "
                "run bpf/install-deps.sh, then make -C bpf"
            )
    return True, "ok"


def _check_names(names: Iterable[str]) -> list[str]:
    wanted: list[str] = []
    for name in names:
        if name not in NAMES:
            raise UserError(
                f"unknown kernel congestion control {name!r}; expected one of {', '.join(NAMES)}",
                field="congestion_control",
            )
        if name not in wanted:
            wanted.append(name)
    return wanted


def _tail(text: str, lines: int = 25) -> str:
    return "\n".join(text.strip().splitlines()[-lines:])


def _run_loader(args: list[str]) -> dict[str, Any]:
    loader = _loader_path()
    if not loader.is_file():
        raise KernelCCError(f"{loader} is missing: run make -C bpf")
    try:
        proc = subprocess.run(
            [str(loader), *args],
            capture_output=True,
            text=True,
            timeout=_LOADER_TIMEOUT_S,
            check=False,
        )
    except subprocess.TimeoutExpired as exc:
        raise KernelCCError(f"mptcplab-cc {' '.join(args)} timed out") from exc
    if proc.returncode != 0:
        raise KernelCCError(
            f"mptcplab-cc {' '.join(args)} failed (exit {proc.returncode}):\n{_tail(proc.stderr)}"
        )
    try:
        result: dict[str, Any] = json.loads(proc.stdout)
    except json.JSONDecodeError as exc:
        raise KernelCCError(f"mptcplab-cc {args[0]} printed no JSON: {proc.stdout!r}") from exc
    return result


def _make(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        ["make", "--no-print-directory", "-C", str(bpf_dir()), *args],
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )


def _build() -> None:
    """Builds bpf/ when it is missing, and rebuilds objects older than their sources: a run
    must not register a program built from an earlier version of its source. Without the
    toolchain (a machine given the build only) what is built is used as it is."""
    if _built():
        if _toolchain_missing() or _make("-q", "objects").returncode == 0:
            return
        proc = _make("objects")
    else:
        proc = _make()
    if proc.returncode != 0 or not _built():
        raise KernelCCError(f"building bpf/ failed:\n{_tail(proc.stdout + proc.stderr)}")


@contextlib.contextmanager
def _locked() -> Iterator[None]:
    """Serialises loads and unloads between processes of this machine."""
    _STATE_DIR.mkdir(parents=True, exist_ok=True)
    with open(_STATE_DIR / ".lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)


def _sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _state_path(name: str) -> Path:
    return _STATE_DIR / f"{name}.json"


def _read_state(name: str) -> dict[str, Any] | None:
    try:
        state: dict[str, Any] = json.loads(_state_path(name).read_text())
    except (OSError, json.JSONDecodeError):
        return None
    return state


def _registered_names() -> set[str]:
    try:
        return set(_AVAILABLE_CC_PATH.read_text().split())
    except OSError:
        return set()


def status() -> dict[str, Any]:
    """The loader's report, per name::

        {"registered": bool,
         "instances": [{"struct_ops_map_id": int,
                        "state": "inuse" | "tobefree" | ...,   # inuse = registered
                        "config": {"count_per_segment": 0|1, "ssthresh_in_recovery": 0|1,
                                   "olia_min_ssthresh": 1|2},
                        "connection_map_id": int,
                        "connections": [{"token": int, "slots_used": int,
                                         "slots": [{"index", "cwnd", "srtt_us",
                                                    "loss_interval"}]}]}]}

    ``token`` is the local MPTCP connection token (as ``ss -ti`` prints it), ``cwnd`` in
    segments, ``srtt_us`` 0 while a subflow is outside the aggregates.
    """
    return _run_loader(["status"])


def _inuse_ids(report: dict[str, Any], name: str) -> list[int]:
    return [
        int(inst["struct_ops_map_id"])
        for inst in report[name]["instances"]
        if inst["state"] == "inuse"
    ]


def connection_slots(name: str) -> dict[int, int]:
    """MPTCP connection token -> number of subflow slots in use, for one congestion control."""
    (name,) = _check_names([name])
    slots: dict[int, int] = {}
    for inst in status()[name]["instances"]:
        for conn in inst["connections"]:
            slots[int(conn["token"])] = int(conn["slots_used"])
    return slots


def ensure_loaded(
    names: Iterable[str],
    *,
    options: CCOptions | None = None,
    holder: str | None = None,
    holder_alive: Callable[[str], bool] | None = None,
) -> dict[str, dict[str, Any]]:
    """Registers the named congestion controls (building ``bpf/`` first if needed).

    A name already registered from the same object file with the same options is kept, so
    repeated calls are cheap; otherwise it is (re)registered. Returns, per name, the SHA-256
    of the object file, ``"implementation": "kernel-bpf"`` and the options in force.

    ``holder`` (an emulator run's id) is recorded with the registration it uses. A name that
    holders still alive (``holder_alive``) use with other options or another object is not
    replaced: sockets those holders open later would silently take the new options, so
    :class:`RegistrationBusy` is raised instead, naming them; the caller waits or gives up.
    """
    wanted = _check_names(names)
    opts = options or CCOptions()
    if opts.olia_min_ssthresh not in (1, 2):
        raise UserError(f"expected 1 or 2, got {opts.olia_min_ssthresh}", field="olia_min_ssthresh")
    ok, reason = available()
    if not ok:
        raise KernelCCError(reason)
    info: dict[str, dict[str, Any]] = {}
    with _locked():
        _build()
        report = status()
        # Every name is checked before any is replaced: a busy one leaves all as they were.
        plans: list[tuple[str, str, dict[str, Any] | None, list[str]]] = []
        for name in wanted:
            sha = _sha256(_object_path(name))
            state = _read_state(name)
            if not (
                report[name]["registered"]
                and state is not None
                and state.get("struct_ops_map_id") in _inuse_ids(report, name)
            ):
                plans.append((name, sha, None, []))
                continue
            holders = [h for h in state.get("holders", []) if holder_alive and holder_alive(h)]
            if state.get("object_sha256") == sha and state.get("options") == asdict(opts):
                plans.append((name, sha, state, holders))
            elif holders:
                raise RegistrationBusy(name, holders)
            else:
                plans.append((name, sha, None, []))
        for name, sha, kept, holders in plans:
            state = kept
            if state is None:
                loaded = _run_loader(["load", "--replace", *opts.loader_args(), name])
                state = {
                    "object_sha256": sha,
                    "options": asdict(opts),
                    "struct_ops_map_id": loaded["loaded"][name]["struct_ops_map_id"],
                }
            state["holders"] = sorted({*holders, holder} if holder is not None else set(holders))
            _state_path(name).write_text(json.dumps(state))
            info[name] = {
                "object_sha256": sha,
                "implementation": IMPLEMENTATION,
                "options": asdict(opts),
            }
    return info


def _unregister(names: list[str]) -> list[str]:
    """Unregisters with the loader, or with bpftool when the loader is not built."""
    if _loader_path().is_file():
        result = _run_loader(["unload", *names])
        return [name for name, ids in result["unloaded"].items() if ids]
    bpftool = shutil.which("bpftool")
    if bpftool is None:
        raise KernelCCError("neither bpf/build/mptcplab-cc nor bpftool is available")
    removed = []
    for name in names:
        proc = subprocess.run(
            [bpftool, "struct_ops", "unregister", "name", name],
            capture_output=True,
            text=True,
            timeout=_LOADER_TIMEOUT_S,
            check=False,
        )
        if proc.returncode == 0:
            removed.append(name)
    return removed


def unload_all(*, unless: Callable[[], bool] | None = None) -> list[str]:
    """Unregisters every mptcp_lia/olia/balia registration; returns the names removed.

    ``unless``, when given, is asked under the lock that loads take: if it answers True
    nothing is removed. An emulator run asks whether another run is alive; asked before the
    lock, a run that registered in between would lose its registration.

    Sockets still using one keep running it until they close; its maps go with the last one.
    """
    if os.geteuid() != 0:
        raise KernelCCError("unloading BPF congestion controls needs root")
    with _locked():
        if unless is not None and unless():
            return []
        removed = _unregister(list(NAMES))
        for name in NAMES:
            _state_path(name).unlink(missing_ok=True)
        still = sorted(_registered_names() & set(NAMES))
    if still:
        raise KernelCCError(f"still registered after unload: {', '.join(still)}")
    return removed


def clean_leftovers(*, unless: Callable[[], bool] | None = None) -> list[str]:
    """For ``mptcplab clean``: removes registrations left by killed loaders or crashed runs.

    ``unless`` is asked under the loaders' lock, as :func:`unload_all` does; answering True
    (a run is alive) leaves everything in place. Returns one line per thing removed; nothing
    to do (or not root) gives an empty list.
    """
    if os.geteuid() != 0:
        return []
    leftovers = sorted(_registered_names() & set(NAMES))
    stale_state = [n for n in NAMES if _state_path(n).exists()]
    if not leftovers and not stale_state:
        return []
    removed = unload_all(unless=unless)
    lines = [f"unregistered kernel congestion control {name}" for name in removed]
    lines += [
        f"removed state of {name}"
        for name in stale_state
        if name not in removed and not _state_path(name).exists()
    ]
    return lines

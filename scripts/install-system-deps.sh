#!/usr/bin/env bash
# Installs the system packages mptcplab needs, only those that are missing.
# - a Rust toolchain (cargo) to build the simulator and the link emulator;
# - python3-venv to create .venv;
# - iproute2 for the emulator's namespaces and MPTCP endpoints;
# - clang, llvm, libbpf-dev and bpftool for the kernel congestion controls (bpf/).
# With --bench, also what `make bench` uses: g++, make and git to build htsim beside the
# simulator, valgrind to count both simulators' instructions per packet.
set -euo pipefail

need=()
command -v python3 >/dev/null || need+=(python3)
python3 -c 'import venv, ensurepip' 2>/dev/null || need+=(python3-venv)
command -v ip >/dev/null || need+=(iproute2)
command -v clang >/dev/null || need+=(clang)
command -v llvm-strip >/dev/null || need+=(llvm)
[ -f /usr/include/bpf/libbpf.h ] || need+=(libbpf-dev)
command -v bpftool >/dev/null || [ -x /usr/sbin/bpftool ] || need+=(bpftool)
command -v pkg-config >/dev/null || need+=(pkg-config)
if [ "${1:-}" = "--bench" ]; then
    command -v g++ >/dev/null || need+=(g++)
    command -v make >/dev/null || need+=(make)
    command -v git >/dev/null || need+=(git)
    command -v valgrind >/dev/null || need+=(valgrind)
fi

if [ ${#need[@]} -gt 0 ]; then
    if [ "$(id -u)" -ne 0 ]; then
        echo "missing system packages: ${need[*]} (run as root or install them: apt-get install ${need[*]})" >&2
        exit 1
    fi
    echo "installing system packages: ${need[*]}"
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq
    apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null
fi

if ! command -v cargo >/dev/null && [ ! -x "$HOME/.cargo/bin/cargo" ]; then
    echo "installing the Rust toolchain from Debian packages"
    apt-get update -qq
    apt-get install -y -qq --no-install-recommends cargo rustc >/dev/null
fi

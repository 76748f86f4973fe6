#!/bin/sh
# Installs the toolchain needed to build and load the BPF congestion controls:
# clang (BPF target), libbpf headers/library, bpftool (vmlinux.h dump, inspection),
# libelf/zlib (libbpf link dependencies). Idempotent: does nothing when everything is present.
set -eu

missing=""
command -v clang >/dev/null 2>&1 || missing="$missing clang"
command -v llvm-strip >/dev/null 2>&1 || missing="$missing llvm"
command -v bpftool >/dev/null 2>&1 || missing="$missing bpftool"
[ -f /usr/include/bpf/libbpf.h ] || missing="$missing libbpf-dev"
[ -f /usr/include/libelf.h ] || missing="$missing libelf-dev"
[ -f /usr/include/zlib.h ] || missing="$missing zlib1g-dev"
command -v pkg-config >/dev/null 2>&1 || missing="$missing pkg-config"

if [ -z "$missing" ]; then
    exit 0
fi

if [ "$(id -u)" != "0" ]; then
    echo "bpf/install-deps.sh: missing packages:$missing (run as root to install them)" >&2
    exit 1
fi

echo "bpf/install-deps.sh: installing$missing"
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
# shellcheck disable=SC2086
apt-get install -y -qq --no-install-recommends $missing

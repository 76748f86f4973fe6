# mptcplab — two commands on a fresh machine: `make run` and `make test`.
# Everything the project needs is installed by these targets: system packages with apt-get
# (scripts/install-system-deps.sh), Python packages into .venv, the Rust extension with maturin.

SHELL := /bin/bash
VENV := .venv
PY := $(VENV)/bin/python
PIP := $(VENV)/bin/pip
MPTCPLAB := $(VENV)/bin/mptcplab
CARGO ?= cargo
export PATH := $(HOME)/.cargo/bin:$(PATH)
# Every pip install here, maturin's included, takes the versions the suite last passed with.
export PIP_CONSTRAINT := $(CURDIR)/constraints.txt

RUST_SOURCES := $(shell find crates -name '*.rs' -o -name Cargo.toml 2>/dev/null) Cargo.toml Cargo.lock

.PHONY: all deps build run test test-rust test-python lint fmt bench explore clean-results

all: build

.stamp-system-deps: scripts/install-system-deps.sh
	bash scripts/install-system-deps.sh
	touch $@

$(VENV)/.stamp-venv: pyproject.toml constraints.txt
	test -x $(PY) || python3 -m venv $(VENV)
	$(PIP) install --quiet --upgrade pip
	$(PIP) install --quiet numpy scipy pandas matplotlib pydantic typer rich pyarrow \
		pytest hypothesis ruff "maturin>=1.5,<2"
	touch $@

# Ray is an optional extra for users (pip install 'mptcplab[ray]'); the tests install it so that
# the Ray executor is checked on a real (local) Ray instance.
$(VENV)/.stamp-test-extras: $(VENV)/.stamp-venv
	$(PIP) install --quiet "ray>=2.9"
	touch $@

deps: .stamp-system-deps $(VENV)/.stamp-venv

$(VENV)/.stamp-build: $(VENV)/.stamp-venv .stamp-system-deps $(RUST_SOURCES) pyproject.toml
	$(VENV)/bin/maturin develop --release --quiet
	touch $@

build: $(VENV)/.stamp-build
	@if [ -f bpf/Makefile ]; then $(MAKE) --no-print-directory -C bpf; fi
	@if [ -d crates/linkem ]; then $(CARGO) build --release --quiet -p linkem; fi

run: build
	$(MPTCPLAB) run campaigns/quickstart.toml
	$(MPTCPLAB) report results/quickstart/store.sqlite -o results/quickstart/report.html
	@echo "report: results/quickstart/report.html"

test: build $(VENV)/.stamp-test-extras
	$(CARGO) fmt --all -- --check
	$(VENV)/bin/ruff check python tests scripts crates/linkem/benches
	$(CARGO) test --release --workspace --quiet
	# The random-scenario properties again with debug assertions on: they check the
	# simulator's cached state (congestion-control views, send pipe) against a recomputation.
	$(CARGO) test -p mpsim --test properties --quiet
	$(PY) -m pytest -q --hypothesis-profile=derandomized

# Property tests with new random examples (make test keeps hypothesis's fixed ones), and a
# deeper search of the simulator's random scenarios.
explore: build
	PROPTEST_CASES=2000 $(CARGO) test --release -p mpsim --test properties --quiet
	$(PY) -m pytest -q tests/analysis/test_analysis_fairshare.py tests/analysis/test_analysis_fairshare_probing.py \
		tests/analysis/test_analysis_capacity_bound.py \
		tests/design/test_design_wsp.py \
		tests/kernel_cc/test_kernel_cc_arith.py tests/scenario/test_tomlloc.py

lint: build
	$(CARGO) fmt --all -- --check
	$(CARGO) clippy --workspace --all-targets --release -- -D warnings
	RUSTDOCFLAGS="-D warnings" $(CARGO) doc --workspace --no-deps --quiet
	$(VENV)/bin/ruff check python tests scripts crates/linkem/benches

fmt:
	$(CARGO) fmt --all
	$(VENV)/bin/ruff format python tests scripts crates/linkem/benches

bench: build
	bash scripts/install-system-deps.sh --bench
	$(PY) scripts/bench.py

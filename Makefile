# Every target has a `## help` line; `make help` lists them.
SHELL := /bin/bash
VENV ?= .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed

.PHONY: help dev test test-rust test-python lint fmt bench demo
help: ## list the targets
	@grep -hE '^[a-z-]+:.*## ' $(MAKEFILE_LIST) | sed 's/:.*## /\t/'

$(PY):
	python3 -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip

$(STAMP): $(PY) pyproject.toml Cargo.toml $(shell find src python -type f 2>/dev/null)
	$(PY) -m pip install -q -e '.[dev]'
	@touch $(STAMP)

dev: $(STAMP) ## create .venv and install the package (editable) with the dev tools

test: test-rust test-python ## run every test: cargo test, then pytest against the sandbox

test-rust: ## the Rust core's unit tests (no Python needed)
	cargo test --quiet

test-python: $(STAMP) ## pytest over tests/ (the public API through the sandbox server)
	$(PY) -m pytest -q

lint: $(STAMP) ## rustfmt, clippy -D warnings, ruff (lint + format), mypy --strict
	cargo fmt --check
	cargo clippy --quiet --all-features --all-targets -- -D warnings
	$(VENV)/bin/ruff check python tests benches
	$(VENV)/bin/ruff format --check python tests benches
	$(VENV)/bin/mypy

fmt: $(PY) ## format Rust and Python sources
	cargo fmt
	$(VENV)/bin/ruff format python tests benches
	$(VENV)/bin/ruff check --fix python tests benches

BENCH_VENV ?= .venv-bench
bench: ## the benchmarks of benches/ vs the peers (release build in .venv-bench; BENCHMARKS.md)
	test -x $(BENCH_VENV)/bin/python || python3 -m venv $(BENCH_VENV)
	$(BENCH_VENV)/bin/pip install -q -e '.[bench]'
	bash benches/run.sh $(BENCH_VENV)/bin/python
	bash benches/sandbox_wrk.sh 5s $(BENCH_VENV)/bin/python

demo: $(STAMP) ## walk the onboarding flow against the embedded sandbox
	$(PY) -m recurring_payments demo

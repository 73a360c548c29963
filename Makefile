# Every target has a `## help` line; `make help` lists them.
SHELL := /bin/bash
VENV ?= .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed

.PHONY: help dev docs test test-rust test-python lint fmt bench bench-floors demo fuzz soak dist dist-sdist dist-wheels check-dist publish
help: ## list the targets
	@grep -hE '^[a-z-]+:.*## ' $(MAKEFILE_LIST) | sed 's/:.*## /\t/'

# Long steps say what they do and about how long it takes, show the compiler's output, and
# (scripts/heartbeat.py) print a line whenever they have been quiet for 15 s.
HEARTBEAT = scripts/heartbeat.py
say = @printf '\n==> %s\n' $(1)

$(PY):
	$(call say,"creating $(VENV) and updating its pip (about 10 s)")
	python3 -m venv $(VENV)
	python3 $(HEARTBEAT) "updating pip" $(PY) -m pip install -q --upgrade pip

$(STAMP): $(PY) pyproject.toml Cargo.toml $(shell find crates python -type f 2>/dev/null)
	@# A per-version extension left by a build from before abi3 would shadow _core.abi3.so.
	rm -f python/recurring_payments/_core.cpython-*.so
	$(call say,"installing the dev tools into $(VENV) (pip: about 30 s the first time)")
	@$(PY) -c "import tomllib; print(*tomllib.load(open('pyproject.toml', 'rb'))['project']['optional-dependencies']['dev'], sep='\n')" \
		| xargs -d '\n' $(PY) $(HEARTBEAT) "installing the dev tools" $(PY) -m pip install -q
	$(call say,"building the Rust extension with cargo and installing it in $(VENV) (about 2 min on 2 cores from a fresh clone; seconds after a small change)")
	MATURIN_PEP517_ARGS="--profile quick" $(PY) $(HEARTBEAT) "building the Rust extension" \
		$(PY) -m pip install -v --no-deps -e .
	@touch $(STAMP)

dev: $(STAMP) ## create .venv and install the package (editable) with the dev tools

DOCS_STAMP := $(VENV)/.docs-installed
# The `docs` extra alone (not the package again: mkdocstrings reads python/ from source).
$(DOCS_STAMP): $(PY) pyproject.toml
	$(call say,"installing the documentation tools into $(VENV) (pip: about 20 s)")
	@$(PY) -c "import tomllib; print(*tomllib.load(open('pyproject.toml', 'rb'))['project']['optional-dependencies']['docs'], sep='\n')" \
		| xargs -d '\n' $(PY) $(HEARTBEAT) "installing the documentation tools" $(PY) -m pip install -q
	@touch $@

docs: $(DOCS_STAMP) ## build the documentation site into site/ (mkdocs --strict: a broken link fails; no table left as text)
	NO_MKDOCS_2_WARNING=1 $(VENV)/bin/mkdocs build --strict --site-dir site
	$(PY) scripts/check_site_tables.py site

test: test-rust test-python ## run every test: cargo test, then pytest against the sandbox

test-rust: ## the Rust core's unit tests (no Python needed)
	$(call say,"building the Rust tests with cargo (about 2 min on 2 cores the first time)")
	python3 $(HEARTBEAT) "building the Rust tests" cargo test --profile quick --no-run
	$(call say,"running the Rust tests (about 30 s)")
	python3 $(HEARTBEAT) "running the Rust tests" cargo test --profile quick --quiet

test-python: $(STAMP) $(DOCS_STAMP) ## pytest over tests/ (the public API through the sandbox server; tests/docs/ builds the site)
	$(call say,"running pytest over tests/ against the sandbox (about 5 min on 2 cores; a dot per test)")
	$(PY) $(HEARTBEAT) "running pytest" $(PY) -m pytest -q

lint: $(STAMP) ## rustfmt, clippy -D warnings, ruff (lint + format), mypy --strict, stubtest, actionlint, citations and links
	cargo fmt --check
	cargo clippy --quiet --all-features --all-targets -- -D warnings
	$(VENV)/bin/ruff check python tests examples benches scripts
	$(VENV)/bin/ruff format --check python tests examples benches scripts
	$(VENV)/bin/mypy
	$(PY) -m mypy.stubtest --allowlist stubtest-allowlist.txt recurring_payments
	$(VENV)/bin/actionlint .github/workflows/*.yml
	$(PY) scripts/check_links.py

fmt: $(PY) ## format Rust and Python sources
	cargo fmt
	$(VENV)/bin/ruff format python tests examples benches scripts
	$(VENV)/bin/ruff check --fix python tests examples benches scripts

BENCH_VENV ?= .venv-bench
# Options of benches/bench.py for both runs, e.g. BENCH_ARGS="--rounds 5"; the first run also
# takes "--only sequential,collection". Both venvs are editable installs of this tree, sharing
# python/recurring_payments/_core*.so: a `make dev` after this puts the quick build back (run
# `make bench` last).
BENCH_ARGS ?=
# Every measurement of both runs (JSON), and BENCHMARKS.md's tables made from them.
BENCH_OUT ?= target/bench
# opentelemetry-api and -sdk: the telemetry workload (on with the no-op tracer, and with an SDK).
bench: ## the benchmarks of benches/ vs the peers, with the targets' table (release build in .venv-bench; BENCHMARKS.md)
	test -x $(BENCH_VENV)/bin/python || python3 -m venv $(BENCH_VENV)
	$(BENCH_VENV)/bin/pip install -q -e '.[bench]' opentelemetry-api opentelemetry-sdk
	mkdir -p $(BENCH_OUT)
	bash benches/run.sh $(BENCH_VENV)/bin/python $(BENCH_ARGS) --json $(BENCH_OUT)/as-placed.json
	# The sequential and async follows again, client and servers on one vCPU: their CPU work,
	# without the wake-up of an idle vCPU that this VM adds to every round trip (BENCHMARKS.md).
	taskset -c 0 bash benches/run.sh $(BENCH_VENV)/bin/python $(BENCH_ARGS) \
		--only sequential,async --placement "one vCPU" --json $(BENCH_OUT)/one-vcpu.json
	bash benches/sandbox_wrk.sh 5s $(BENCH_VENV)/bin/python
	$(BENCH_VENV)/bin/python benches/fleet.py
	$(BENCH_VENV)/bin/python benches/page.py $(BENCH_OUT)/as-placed.json $(BENCH_OUT)/one-vcpu.json \
		| tee $(BENCH_OUT)/tables.md

bench-floors: $(STAMP) ## instructions (callgrind) and µs per follow of the Rust floors and ours, nginx HTTP and HTTPS (benches/floor/measure.sh)
	bash benches/floor/measure.sh $(PY)

SOAK_SECONDS ?= 300
soak: $(STAMP) ## the long soak: 64 threads + 256 tasks for SOAK_SECONDS (300), tokens expiring, faults (SOAK_SEED replays)
	SOAK_SECONDS=$(SOAK_SECONDS) $(PY) -m pytest -q -s -p no:cacheprovider tests/faults/test_soak.py

demo: $(STAMP) ## walk the onboarding flow against the embedded sandbox
	$(call say,"the onboarding flow against the embedded sandbox")
	$(PY) -m recurring_payments demo

FUZZ_SECONDS ?= 60
# Only a stable toolchain is assumed: RUSTC_BOOTSTRAP lets cargo-fuzz pass its nightly flags.
# `-s none`: the code under test is safe Rust, so no sanitizer (faster builds and runs).
fuzz: ## fuzz the HAL parser and the template engine, FUZZ_SECONDS each (needs cargo-fuzz)
	@command -v cargo-fuzz >/dev/null || { echo "make fuzz: run 'cargo install cargo-fuzz'" >&2; exit 1; }
	for target in hal template; do \
		RUSTC_BOOTSTRAP=1 cargo fuzz run -s none $$target -- \
			-dict=$(CURDIR)/fuzz/$$target.dict -max_total_time=$(FUZZ_SECONDS) || exit 1; \
	done

# The distributions: an sdist and four abi3 wheels (CPython >= 3.10), built with the release
# profile: Linux x86_64 and aarch64, each for glibc 2.17 (manylinux2014) and for musl 1.2
# (musllinux_1_2, Alpine), cross-built with zig as the linker (maturin `--zig`, zig from the
# ziglang package) against the rustup target of each. zig's musl names the C library `libc.so`:
# scripts/musl_libc_name.py renames it to Alpine's `libc.musl-<arch>.so.1`, the name auditwheel
# accepts. macOS and Windows wheels come from .github/workflows/release.yml.
DIST_VENV ?= .venv-dist
DIST_TOOLS := $(DIST_VENV)/.tools
# rust target : wheel compatibility
DIST_GLIBC := x86_64-unknown-linux-gnu:manylinux2014 aarch64-unknown-linux-gnu:manylinux2014
DIST_MUSL := x86_64-unknown-linux-musl:musllinux_1_2 aarch64-unknown-linux-musl:musllinux_1_2
DIST_WHEELS ?= $(DIST_GLIBC) $(DIST_MUSL)
$(DIST_TOOLS): pyproject.toml
	test -x $(DIST_VENV)/bin/python || python3 -m venv $(DIST_VENV)
	$(DIST_VENV)/bin/python -m pip install -q --upgrade pip
	$(DIST_VENV)/bin/python -m pip install -q --group dist
	@touch $@

dist: $(DIST_TOOLS) ## sdist + the four abi3 Linux wheels (manylinux, musllinux; x86_64, aarch64) into dist/ (release builds: minutes each), checked
	rm -rf dist
	$(MAKE) --no-print-directory dist-sdist dist-wheels
	$(MAKE) --no-print-directory check-dist

# The parts of `make dist`, for CI, which builds the musl wheels beside other work:
# `make dist-wheels DIST_WHEELS='$$(DIST_MUSL)'`.
dist-sdist: $(DIST_TOOLS) ## add the sdist to dist/
	$(DIST_VENV)/bin/maturin sdist --out dist

dist-wheels: $(DIST_TOOLS) ## add the wheels of DIST_WHEELS (target:compatibility words; all four by default) to dist/, unchecked
	rustup target add $(foreach w,$(DIST_WHEELS),$(firstword $(subst :, ,$(w))))
	@# maturin finds zig through the ziglang package of the Python first on PATH.
	set -e; for wheel in $(DIST_WHEELS); do \
		PATH="$(CURDIR)/$(DIST_VENV)/bin:$$PATH" $(DIST_VENV)/bin/maturin build --release --zig \
			--target $${wheel%%:*} --compatibility $${wheel#*:} --out dist; \
	done
	$(if $(filter %:musllinux_1_2,$(DIST_WHEELS)),$(DIST_VENV)/bin/python scripts/musl_libc_name.py dist/*-musllinux_*.whl)

check-dist: $(DIST_TOOLS) ## what `make dist` checks: auditwheel, tags, size, strip, metadata
	$(DIST_VENV)/bin/twine check --strict dist/*
	$(DIST_VENV)/bin/python scripts/check_dist.py dist

# Publishing is never run by CI: `make dist`, then TWINE_USERNAME=__token__ TWINE_PASSWORD=...
# (a PyPI API token) make publish; TWINE_REPOSITORY=testpypi tries TestPyPI first.
publish: $(DIST_TOOLS) ## upload dist/ to PyPI with twine (make dist first; needs a PyPI token)
	$(MAKE) --no-print-directory check-dist
	$(DIST_VENV)/bin/twine upload --non-interactive dist/*

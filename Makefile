# Two commands: `make run` (the service, offline) and `make test` (everything CI runs).
#
# Installs come from the lock files, fully pinned with hashes (requirements/run.txt: what
# running needs; requirements/dev.txt: that plus the test and lint tools), through uv, which
# is installed into the venv from the package index first. `make lock` regenerates them
# after pyproject.toml changes (tests/unit/test_lock.py fails until you do).
PYTHON ?= python3
VENV ?= .venv
PY := $(VENV)/bin/python
UV := $(VENV)/bin/uv
UV_VERSION ?= 0.13.9
# uv trusts the system's certificate store (a proxy's CA included), as pip does.
export UV_NATIVE_TLS := 1
# Installed packages are compiled to bytecode once, at install: where PYTHONDONTWRITEBYTECODE is
# set (as on our CI machines) every process would otherwise compile them from source at each
# start, 2.3 s against 0.9 s to import what a worker imports (perf/RESULTS.md, "Start-up").
export UV_COMPILE_BYTECODE := 1
ARGS ?=

.PHONY: run test unit slices skeleton install lock clean

$(UV):
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --disable-pip-version-check "uv==$(UV_VERSION)"

# Running: only the runtime set (no mypy, pytest, matplotlib, schemathesis). EXTRAS=otel: the
# runtime set and the otel extra (requirements/otel.txt, at the versions the tests run).
EXTRAS ?=
RUN_LOCK := requirements/$(or $(EXTRAS),run).txt
RUN_INSTALLED := $(VENV)/.run-installed$(EXTRAS:%=-%)
$(RUN_INSTALLED): $(RUN_LOCK) pyproject.toml | $(UV)
	$(UV) pip install --quiet --python $(PY) --require-hashes -r $(RUN_LOCK)
	$(UV) pip install --quiet --python $(PY) --no-deps -e .
	touch $@

# Testing: the dev set (a superset of the runtime set).
$(VENV)/.dev-installed: requirements/dev.txt pyproject.toml | $(UV)
	$(UV) pip install --quiet --python $(PY) --require-hashes -r requirements/dev.txt
	$(UV) pip install --quiet --python $(PY) --no-deps -e .
	touch $@ $(VENV)/.run-installed $(VENV)/.run-installed-otel

install: $(VENV)/.dev-installed

run: $(RUN_INSTALLED)
	$(PY) main.py $(ARGS)

test: $(VENV)/.dev-installed
	VENV=$(VENV) scripts/test

# Seconds, and nothing but the venv: the unit suite and the contract suites (every interpreter
# and wrapper against its algebra's contract), minus the contract cases that need Redis (their
# ids name it; they start a Docker container), which `make test` runs with everything else.
# No system package, no Docker engine, no server process. ARGS go to pytest (e.g. ARGS=-x).
unit: $(VENV)/.dev-installed
	$(PY) -m pytest -q $(ARGS) tests/unit
	$(PY) -m pytest -q $(ARGS) tests/contract -k "not redis"

# Each slice removed alone in a scratch copy, then all of them: ruff, mypy, lint-imports and the
# unit and contract suites on what is left (scripts/slices.py; `make test` runs it too).
slices: $(VENV)/.dev-installed
	$(PY) scripts/slices.py check $(ARGS)

# The core alone, every slice removed but those SLICES names (history,tracing), written to DEST
# (empty or new) as a new repository: a skeleton to start a service of your own from
# (ARCHITECTURE.md, "Start from the skeleton").
skeleton: $(VENV)/.dev-installed
	@test -n "$(DEST)" || { echo "usage: make skeleton DEST=../my-service" >&2; exit 2; }
	$(PY) scripts/slices.py skeleton $(DEST) --keep "$(SLICES)"

lock: | $(UV)
	$(UV) pip compile --quiet --universal --python-version 3.11 --generate-hashes \
		--custom-compile-command "make lock" pyproject.toml -o requirements/run.txt
	$(UV) pip compile --quiet --universal --python-version 3.11 --generate-hashes \
		--custom-compile-command "make lock" --extra dev pyproject.toml -o requirements/dev.txt
	$(UV) pip compile --quiet --universal --python-version 3.11 --generate-hashes \
		--custom-compile-command "make lock" --extra otel -c requirements/dev.txt pyproject.toml -o requirements/otel.txt

clean:
	rm -rf $(VENV) .mypy_cache .pytest_cache .ruff_cache

# Two commands: `make run` (the service, offline) and `make test` (everything CI runs).
PYTHON ?= python3
VENV ?= .venv
PY := $(VENV)/bin/python
ARGS ?=

.PHONY: run test install clean

$(VENV)/.installed: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e '.[dev]'
	touch $@

install: $(VENV)/.installed

run: $(VENV)/.installed
	$(PY) main.py $(ARGS)

test: $(VENV)/.installed
	VENV=$(VENV) scripts/test

clean:
	rm -rf $(VENV) .mypy_cache .pytest_cache .ruff_cache

# Two entry points for a fresh machine with only Python and pip: `make demo`, `make test`.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: demo test install bench clean jax-env corpus test-xla lint

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)

$(STAMP): $(BIN)/python pyproject.toml
	$(BIN)/python -m pip install -q --upgrade pip
	$(BIN)/python -m pip install -q -e ".[test,dev]"
	touch $(STAMP)

install: $(STAMP)

demo: $(STAMP)
	$(BIN)/cpsched compare models/hlo/demo.hlo --async-collectives --time-limit 10

test: $(STAMP)
	$(BIN)/python -m pytest tests

# ruff (lint and format check) and mypy on the package, configured in pyproject.toml
lint: $(STAMP)
	$(BIN)/ruff check cpsched
	$(BIN)/ruff format --check cpsched
	$(BIN)/mypy

bench: $(STAMP)
	$(BIN)/python benchmarks/run_all.py

clean:
	rm -rf $(VENV) build *.egg-info .pytest_cache

# jax lives in its own environment (never in .venv): `make jax-env`, then `make corpus`
# recaptures models/hlo/corpus/ (minutes). JAX_VERSION=x.y.z picks another release.
JAX_VERSION ?= 0.10.2
JAX_VENV := .venv-jax
JAX_STAMP := $(JAX_VENV)/.installed-jax-$(JAX_VERSION)

$(JAX_VENV)/bin/python:
	$(PYTHON) -m venv $(JAX_VENV)

$(JAX_STAMP): $(JAX_VENV)/bin/python pyproject.toml
	$(JAX_VENV)/bin/python -m pip install -q --upgrade pip
	$(JAX_VENV)/bin/python -m pip install -q "jax==$(JAX_VERSION)" "jaxlib==$(JAX_VERSION)" -e .
	rm -f $(JAX_VENV)/.installed-jax-*
	touch $@

jax-env: $(JAX_STAMP)

corpus: $(JAX_STAMP)
	$(JAX_VENV)/bin/python models/jax/capture.py --corpus

# XLA's own parser and schedule check on every module cpsched writes (tests/xla/). Needs
# .venv-jax; where it cannot be made (no package registry) it says so and passes.
test-xla: $(STAMP)
	@if $(MAKE) -s jax-env; then \
	  CPSCHED_JAX_PYTHON=$(JAX_VENV)/bin/python $(BIN)/python -m pytest tests/xla -rs; \
	else \
	  echo "test-xla: SKIPPED: .venv-jax could not be created (jax==$(JAX_VERSION) from the package registry); XLA's acceptance of written modules was not checked"; \
	fi

# Two entry points for a fresh machine with only Python and pip: `make demo`, `make test`.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: demo test install bench clean jax-env corpus test-xla lint mutation ray-env test-ray

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

# Ray lives in its own environment too (`make ray-env`: .venv-ray, about 70 MB from the
# package registry). `make test-ray` runs tests/ray/ (`cpsched sweep` on a local Ray) with
# it; where it cannot be made it says so and passes.
RAY_VENV := .venv-ray
RAY_STAMP := $(RAY_VENV)/.installed-ray

$(RAY_VENV)/bin/python:
	$(PYTHON) -m venv $(RAY_VENV)

$(RAY_STAMP): $(RAY_VENV)/bin/python pyproject.toml
	$(RAY_VENV)/bin/python -m pip install -q --upgrade pip
	$(RAY_VENV)/bin/python -m pip install -q -e ".[ray]"
	touch $@

ray-env: $(RAY_STAMP)

test-ray: $(STAMP)
	@if $(MAKE) -s ray-env; then \
	  CPSCHED_RAY_PYTHON=$(abspath $(RAY_VENV))/bin/python $(BIN)/python -m pytest tests/ray -rs; \
	else \
	  echo "test-ray: SKIPPED: .venv-ray could not be created (ray from the package registry); sweeps on Ray were not checked"; \
	fi

# Mutation testing of the core (dev tool, its own environment; the tests run in .venv).
# Each module is mutated with only the tests that are about it, so a run takes minutes:
# `make mutation`, then `.venv-mutation/bin/mutmut results` lists the survivors.
# MUTATE=cpsched/analysis/validate.py picks one module. Results: benchmarks/results_tests.md.
MUT_VENV := .venv-mutation
MUT_STAMP := $(MUT_VENV)/.installed
MUT_PYTEST := $(abspath $(BIN))/python -m pytest -x -q -p no:cacheprovider -p no:randomly
MUT_TESTS_memory := tests/test_graph_memory.py tests/test_memory_model.py tests/test_oracles.py::test_simulator_matches_reference_at_every_step tests/test_oracles.py::test_live_ranges_match_reference tests/test_oracles.py::test_live_in_parameter_counts_from_step_zero tests/test_oracles.py::test_buffer_is_freed_after_its_last_use_not_at_it tests/test_oracles.py::test_host_buffers_and_transients_by_hand tests/test_oracles.py::test_lower_bounds_hold_for_every_order
MUT_TESTS_validate := tests/test_validate.py tests/test_oracles.py::test_validator_accepts_exactly_the_reference_orders tests/test_oracles.py::test_validator_enforces_each_kind_of_edge tests/test_oracles.py::test_claimed_peak_is_checked_in_every_scenario
MUT_TESTS_symbolic := tests/test_symbolic.py tests/test_symbolic_exact.py tests/test_scenarios.py
MUT_TESTS_scenarios := tests/test_scenarios.py tests/test_scenarios_exact.py tests/test_symbolic.py tests/test_oracles.py::test_claimed_peak_is_checked_in_every_scenario
MUTATE ?= cpsched/analysis/memory.py cpsched/analysis/validate.py cpsched/core/symbolic.py cpsched/core/scenarios.py

$(MUT_STAMP):
	$(PYTHON) -m venv $(MUT_VENV)
	$(MUT_VENV)/bin/python -m pip install -q "mutmut>=2.4,<3"
	touch $@

mutation: $(STAMP) $(MUT_STAMP)
	@for f in $(MUTATE); do \
	  m=$$(basename $$f .py); \
	  case $$m in memory) t='$(MUT_TESTS_memory)';; validate) t='$(MUT_TESTS_validate)';; \
	    symbolic) t='$(MUT_TESTS_symbolic)';; scenarios) t='$(MUT_TESTS_scenarios)';; \
	    *) t='tests';; esac; \
	  echo "== $$f: $$t"; \
	  $(MUT_VENV)/bin/mutmut run --paths-to-mutate $$f --runner "$(MUT_PYTEST) $$t" --no-progress; \
	done; $(MUT_VENV)/bin/mutmut results

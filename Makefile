# prdigest — the two commands: `make run` and `make test`.
PYTHON ?= python3
VENV   ?= .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed

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
	$(BIN)/mypy bot

unit: $(STAMP)
	$(BIN)/pytest -q $(PYTEST_ARGS)

test: lint typecheck unit

bench: $(STAMP)
	$(BIN)/python -m bench $(if $(QUICK),--quick,)

faults: $(STAMP)
	$(BIN)/pytest -m faults -s -q $(PYTEST_ARGS)

clean:
	rm -rf $(VENV) .pytest_cache .mypy_cache .ruff_cache

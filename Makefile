# Every target sets itself up: a fresh clone needs only `make test` or `make demo`.
SHELL := /bin/bash
VENV := .venv
BIN := $(VENV)/bin
# python3.12 may be a pyenv shim that is not active; fall back to pyenv's own install.
PYTHON312 := $(shell for p in python3.12 $$HOME/.pyenv/versions/3.12*/bin/python3.12 /usr/local/bin/python3.12 /usr/bin/python3.12; do \
	$$p -c 'import sys; assert sys.version_info[:2] == (3, 12)' >/dev/null 2>&1 && { echo $$p; break; }; done)

.PHONY: install demo test test-fast lint docs clean

$(BIN)/python:
	@test -n "$(PYTHON312)" || { echo "make: python3.12 not found" >&2; exit 1; }
	$(PYTHON312) -m venv $(VENV)

$(VENV)/.installed: pyproject.toml | $(BIN)/python
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[dev,docs]'
	touch $@

install: $(VENV)/.installed

demo: install
	$(BIN)/perfci demo

lint: install
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/mypy src/perfci models

test: lint
	$(BIN)/python -m pytest -W error

# Everything but the tests marked slow (subprocess kills, Dask workers, MCMC fits).
test-fast: lint
	$(BIN)/python -m pytest -W error -m "not slow"

docs: install
	$(BIN)/python -m pytest -q docs
	$(BIN)/sphinx-build -W --keep-going -b html docs docs/_build/html

clean:
	rm -rf $(VENV) docs/_build .pytest_cache .ruff_cache .mypy_cache build src/*.egg-info

# Two commands on a fresh clone: `make demo` (the main job on the bundled example) and `make test`.
PY ?= python3
VENV := .venv
BIN := $(VENV)/bin
PYTEST_ARGS ?=

.PHONY: install demo test test-fast test-under-load lint bench clean

$(BIN)/rwgate: pyproject.toml
	$(PY) -m venv $(VENV)
	$(BIN)/pip install -q --upgrade pip
	$(BIN)/pip install -q -e '.[dev,mcp]'
	touch $(BIN)/rwgate

# Byte-compiled as pip compiles a regular install (an editable one is not, and a machine with
# PYTHONDONTWRITEBYTECODE would recompile rwgate in every filter and hook run).
install: $(BIN)/rwgate
	$(BIN)/python -m compileall -q src >/dev/null

demo: install
	$(BIN)/python examples/demo.py

# pytest keeps its assertion-rewritten test modules in __pycache__ even where the environment sets
# PYTHONDONTWRITEBYTECODE: rewriting them again costs every worker of every run ~3 s of CPU.
PYTEST := env -u PYTHONDONTWRITEBYTECODE $(BIN)/pytest

# Installs the programs the end-to-end tests drive when they are missing (scripts/install-test-tools).
test: install
	scripts/install-test-tools
	$(PYTEST) -q -n 2 $(PYTEST_ARGS)

# The unit tier only: no pandoc, TeX or MCP client runs (under 30 s on 2 idle cores).
test-fast: install
	$(PYTEST) -q -n 2 tests/unit $(PYTEST_ARGS)

# `make test` while busy loops keep every core at 100 % (before a change that touches timing).
test-under-load: install
	scripts/test-under-load $(PYTEST_ARGS)

# check-test-timing: no test compares a wall-clock duration with a constant under 10 s.
lint: install
	$(BIN)/ruff check src tests benchmarks
	$(BIN)/ruff format --check src tests benchmarks
	$(BIN)/mypy
	$(BIN)/lint-imports
	$(BIN)/python scripts/check-test-timing

bench: install
	$(BIN)/python benchmarks/crossref_bench.py
	$(BIN)/python benchmarks/snapshot_bench.py

# Two commands on a fresh clone: `make demo` (the main job on the bundled example) and `make test`.
PY ?= python3
VENV := .venv
BIN := $(VENV)/bin
PYTEST_ARGS ?=

.PHONY: install demo test test-fast lint bench clean

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

# Installs the programs the end-to-end tests drive when they are missing (scripts/install-test-tools).
test: install
	scripts/install-test-tools
	$(BIN)/pytest -q -n 2 $(PYTEST_ARGS)

# The unit tier only: no pandoc, TeX or MCP client runs (under 30 s).
test-fast: install
	$(BIN)/pytest -q -n 2 tests/unit $(PYTEST_ARGS)

lint: install
	$(BIN)/ruff check src tests benchmarks
	$(BIN)/ruff format --check src tests benchmarks
	$(BIN)/mypy
	$(BIN)/lint-imports

bench: install
	$(BIN)/python benchmarks/crossref_bench.py
	$(BIN)/python benchmarks/snapshot_bench.py

# `make example` and `make test` are the two front-door commands in the README.
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
# `make example` runs the package alone (msgspec and click), in a venv of its own: seconds, not
# the development extras (SDKs, browsers, type checker) `make test` needs
EXAMPLE_VENV ?= .venv-example
EXAMPLE_BIN := $(EXAMPLE_VENV)/bin

.PHONY: setup example test lint bench test-clone

$(BIN)/sessionctx: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install -q --upgrade pip
	$(BIN)/pip install -q -e '.[dev]'
	touch $@

# The sources byte-compiled, as an installed package is (pip compiles on install): where
# PYTHONDONTWRITEBYTECODE is set, nothing else would, and every run would compile them again.
setup: $(BIN)/sessionctx
	$(BIN)/python -m compileall -q src

$(EXAMPLE_BIN)/sessionctx: pyproject.toml
	$(PYTHON) -m venv $(EXAMPLE_VENV)
	$(EXAMPLE_BIN)/pip install -q --disable-pip-version-check -e .
	touch $@

# check says what is wrong (exit 1: expected here), repair --dry-run what a repair would take
# out of the file (nothing is written), report writes the page to open in a browser
example: $(EXAMPLE_BIN)/sessionctx
	$(EXAMPLE_BIN)/sessionctx check examples/interrupted.jsonl || true
	$(EXAMPLE_BIN)/sessionctx repair examples/interrupted.jsonl --dry-run || true
	$(EXAMPLE_BIN)/sessionctx report examples/interrupted.jsonl -o $(EXAMPLE_VENV)/report.html

lint: setup
	$(BIN)/ruff check src tests benchmarks
	$(BIN)/mypy
	$(BIN)/python -m tests.typecheck.expect

test: lint
	$(BIN)/pytest

# The committed tree, cloned where no ../shared sits beside it, passes on its own.
test-clone:
	tmp="$$(mktemp -d)" && trap 'rm -rf "$$tmp"' EXIT && \
	git clone --quiet . "$$tmp/sessionctx" && test ! -e "$$tmp/shared" && \
	$(MAKE) -C "$$tmp/sessionctx" test

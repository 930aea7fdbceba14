# `make example` and `make test` are the two front-door commands in the README.
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin

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

example: setup
	$(BIN)/sessionctx explain examples/interrupted.jsonl
	$(BIN)/sessionctx check examples/interrupted.jsonl || true
	$(BIN)/sessionctx build examples/interrupted.jsonl --provider anthropic --tools examples/tools.json --system "You are a coding agent."

lint: setup
	$(BIN)/ruff check src tests benchmarks
	$(BIN)/mypy

test: lint
	$(BIN)/pytest

# The committed tree, cloned where no ../shared sits beside it, passes on its own.
test-clone:
	tmp="$$(mktemp -d)" && trap 'rm -rf "$$tmp"' EXIT && \
	git clone --quiet . "$$tmp/sessionctx" && test ! -e "$$tmp/shared" && \
	$(MAKE) -C "$$tmp/sessionctx" test

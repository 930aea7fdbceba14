# `make example` and `make test` are the two front-door commands in the README.
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
# `make example` runs the package from src/ with only what it depends on (pyproject.toml's
# dependencies: msgspec and click) installed beside it by pip --target: no venv to seed with pip,
# no build backend to fetch, nothing to build, so pip's download is nearly all of its time.
# Where $(PYTHON) has no pip of its own (the script below exits 1), a venv's pip installs them.
EXAMPLE_DIR ?= .venv-example
EXAMPLE_LIB := $(EXAMPLE_DIR)/lib
SESSIONCTX_EXAMPLE := PYTHONPATH=src:$(EXAMPLE_LIB) $(PYTHON) -m sessionctx
DEPENDENCIES := import importlib.util, tomllib; \
  print(*tomllib.load(open("pyproject.toml", "rb"))["project"]["dependencies"], sep="\n"); \
  raise SystemExit(importlib.util.find_spec("pip") is None)

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

$(EXAMPLE_LIB)/.installed: pyproject.toml
	rm -rf $(EXAMPLE_LIB) && mkdir -p $(EXAMPLE_DIR)
	if $(PYTHON) -c '$(DEPENDENCIES)' > $(EXAMPLE_DIR)/requirements.txt; then pip="$(PYTHON) -m pip"; \
	else $(PYTHON) -m venv $(EXAMPLE_DIR)/venv && pip="$(EXAMPLE_DIR)/venv/bin/python -m pip"; fi; \
	PIP_ROOT_USER_ACTION=ignore $$pip install -q --disable-pip-version-check \
	  --target $(EXAMPLE_LIB) -r $(EXAMPLE_DIR)/requirements.txt
	touch $@

# check says what is wrong (exit 1: expected here), repair --dry-run what a repair would take
# out of the file (nothing is written), report writes the page to open in a browser
example: $(EXAMPLE_LIB)/.installed
	$(SESSIONCTX_EXAMPLE) check examples/interrupted.jsonl || true
	$(SESSIONCTX_EXAMPLE) repair examples/interrupted.jsonl --dry-run || true
	$(SESSIONCTX_EXAMPLE) report examples/interrupted.jsonl -o $(EXAMPLE_DIR)/report.html

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

# prov: every task a developer or CI runs. `make help` lists them.
PYTHON ?= python3
VENV   ?= .venv
BIN    := $(VENV)/bin

.PHONY: help install test lint format schemas demo bench clean readme reliability

help:
	@grep -E '^[a-z-]+:.*## ' $(MAKEFILE_LIST) | sed 's/:.*## /\t/'

# Two steps, each saying what it does and letting pip list each package (a silent minute looks
# like a hang): prov and what it needs to run (`make demo` stops here), then the development
# tools (`make test`, `make lint`: ray, moto, mypy... the larger part of a first install).
RUN_STAMP := $(VENV)/.prov-run

$(RUN_STAMP): pyproject.toml
	@echo "make: installing prov into $(VENV) (under a minute the first time; pip lists each package)"
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --progress-bar off -e .
	touch $@

$(BIN)/prov: $(RUN_STAMP)
	@echo "make: adding the development tools to $(VENV) (a minute or more the first time)"
	$(BIN)/python -m pip install --progress-bar off -e '.[dev]'
	@echo "make: $(VENV) is ready"
	touch $@

install: $(BIN)/prov ## Create .venv and install prov with its development tools

test: install ## Run the test suite (offline)
	$(BIN)/python -m pytest

reliability: install ## Tamper corpora (DSSE, Sigstore), properties, crashes, writers, faults, hostile servers: the figures
	$(BIN)/python -m tests.reliability

lint: install ## ruff (lint + format check) and mypy --strict
	$(BIN)/ruff check provenance tests examples benchmarks
	$(BIN)/ruff format --check provenance tests examples benchmarks
	$(BIN)/mypy

format: install ## Apply ruff's formatting and safe fixes
	$(BIN)/ruff format provenance tests benchmarks
	$(BIN)/ruff check --fix provenance tests benchmarks

schemas: install ## Regenerate schemas/ and docs/config.md (the prov.toml reference) from the models
	$(BIN)/python -m provenance.render.schemas schemas
	$(BIN)/python -m provenance.render.config_doc docs/config.md

demo: $(RUN_STAMP) ## The embedded Marin demo: two milestones captured, signed, verified, diffed, checked
	$(BIN)/python examples/marin/demo.py --out out/marin-demo

bench: install ## Benchmarks against baselines; the table goes to benchmarks/results/ (PROV_BENCH_SCALE=0.1 for a quick run)
	@for tool in b3sum time; do command -v $$tool >/dev/null || [ -x /usr/bin/$$tool ] || missing="$$missing $$tool"; done; \
	if [ -n "$$missing" ]; then \
	  if [ "$$(id -u)" = 0 ]; then \
	    (apt-get install -y -qq $$missing || (apt-get update -qq && apt-get install -y -qq $$missing)) >/dev/null; \
	  else echo "bench needs:$$missing (apt-get install$$missing, as root)" >&2; exit 2; fi; \
	fi
	$(BIN)/python -m benchmarks $(BENCH_ARGS)

clean: ## Remove the virtual environment and caches
	rm -rf $(VENV) .pytest_cache .mypy_cache .ruff_cache

readme: install ## Rewrite the README's command reference from `prov --help`
	$(BIN)/python -m provenance.cli._readme README.md

# Quick start (README): `make demo` runs the whole job end to end; `make test` runs the tests.
PYTHON ?= python3

.PHONY: install dictionaries demo test lint

install:
	$(PYTHON) -m pip install -q -e ".[test,plots]"

dictionaries:
	bash scripts/install_dictionaries.sh

demo: install dictionaries
	bookdup demo

test: install dictionaries lint
	bash scripts/run_tests.sh

lint: install
	bash scripts/lint.sh

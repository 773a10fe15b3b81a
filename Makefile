# Quick start (README): `make demo` runs the whole job end to end; `make test` runs the tests.
PYTHON ?= python3

.PHONY: install dictionaries demo test check lint

install:
	$(PYTHON) -m pip install -q -e ".[test,plots]"

dictionaries:
	bash scripts/install_dictionaries.sh

demo: install dictionaries
	bookdup demo

test: install dictionaries lint
	bash scripts/run_tests.sh

# The quick tier while iterating: the static checks and every test that needs no node (the
# node's URL points nowhere, so a test that reaches one unmarked fails instead of passing).
check: install lint
	ELASTICSEARCH_URL=http://127.0.0.1:9 $(PYTHON) -m pytest -q -p no:cacheprovider -m "not es"

lint: install
	bash scripts/lint.sh

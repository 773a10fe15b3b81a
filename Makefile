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

# The quick tier while iterating: the static checks and every test that needs no node and is
# not marked slow (the whole-corpus proofs on the real books; `make test` runs them). The
# node's URL points nowhere, so a test that reaches one unmarked fails instead of passing.
check: install lint
	ELASTICSEARCH_URL=http://127.0.0.1:9 $(PYTHON) -m pytest -q -p no:cacheprovider -n 2 -m "not es and not slow"

lint: install
	bash scripts/lint.sh

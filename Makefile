# make install: .venv with the project and its dependencies (.venv/bin/pokerctl is the CLI)
# make test:    install, then every test
# make demo:    install, then bots play hands of every game and the audit is printed
# make bench:   install, then the benchmarks (figures printed, nothing asserted)
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.install-stamp

.PHONY: install test demo bench clean

install: $(STAMP)

$(STAMP): pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[test,bench]'
	touch $(STAMP)

test: install
	$(BIN)/python -m pytest -q

demo: install
	$(BIN)/pokerctl demo

bench: install
	$(BIN)/python -m bench

clean:
	rm -rf $(VENV) build *.egg-info .pytest_cache .hypothesis

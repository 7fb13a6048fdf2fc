# make install: .venv with the project and its dependencies (.venv/bin/pokerctl is the CLI)
# make lint:    install, then ruff (pyflakes, bugbear, import order) and mypy (shared/, services/,
#               bench/; strict on shared/poker), both configured in pyproject.toml
# make test:    install, lint, Debian's chromium and kubectl if missing, then every test
# make unit:    install, then the unit tests only (about a minute; no lint, no apt-get)
# make demo:    install, then bots play hands of every game and the audit is printed
#               (SERVE=1: the web pages stay up until Ctrl-C)
# make help:    these targets, one line each
# make bench:   install, then the benchmarks (figures printed, nothing asserted)
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.install-stamp

GEN := gen
PROTO_FILES := $(shell find protos -name '*.proto')
PROTO_STAMP := $(GEN)/.stamp

.PHONY: help install protos lint tools test unit demo bench soak clean

help:
	@echo "make demo     set up .venv, start NATS and every service, bots play a hand of every game,"
	@echo "              print the audit (make demo SERVE=1: keep the web pages up until Ctrl-C)"
	@echo "make test     set up .venv, lint, then every test (about 10 minutes)"
	@echo "make unit     the unit tests only: no lint, no browser, no NATS (about a minute)"
	@echo "make install  .venv with the project and its dependencies (.venv/bin/pokerctl)"
	@echo "make lint     ruff and mypy"
	@echo "make bench    the benchmarks (figures printed, nothing asserted; about an hour)"
	@echo "make soak     N tables for M minutes: memory and file descriptors of every process"
	@echo "make clean    remove .venv, gen/ and the caches"

install: $(STAMP) $(PROTO_STAMP)

$(STAMP): pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[test,bench]'
	# generated protobuf/gRPC modules live in gen/ (git-ignored); put it on the venv's path
	echo "$(CURDIR)/$(GEN)" > "$$($(BIN)/python -c 'import site; print(site.getsitepackages()[0])')/poker-protos.pth"
	touch $(STAMP)

# Generated code is built, never committed.
protos: $(PROTO_STAMP)

$(PROTO_STAMP): $(PROTO_FILES) $(STAMP)
	rm -rf $(GEN) && mkdir -p $(GEN)
	$(BIN)/python -m grpc_tools.protoc -Iprotos --python_out=$(GEN) --pyi_out=$(GEN) \
		--grpc_python_out=$(GEN) $(PROTO_FILES)
	touch $(PROTO_STAMP)

lint: install
	$(BIN)/ruff check .
	$(BIN)/mypy

test: install lint tools
	$(BIN)/python -m pytest -q

unit: install
	$(BIN)/python -m pytest -q tests/unit

# What the tests drive besides Python, from Debian's packages, installed here when missing:
# chromium (the web pages' tests, through Playwright, which downloads no browser of its own)
# and kubectl (the deploy tests render the manifests with `kubectl kustomize`).
tools:
	@missing=""; \
	command -v chromium >/dev/null || missing="$$missing chromium"; \
	command -v kubectl >/dev/null || missing="$$missing kubectl"; \
	if [ -n "$$missing" ]; then \
		echo "installing$$missing (Debian packages)"; \
		apt-get update -q && DEBIAN_FRONTEND=noninteractive apt-get install -y -q $$missing; \
	fi

demo: install
	$(BIN)/pokerctl demo $(if $(SERVE),--serve,)

bench: install
	$(BIN)/python -m bench

soak: install
	$(BIN)/python -m bench.bench_soak

clean:
	rm -rf $(VENV) $(GEN) build *.egg-info .pytest_cache .hypothesis .mypy_cache .ruff_cache

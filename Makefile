# make install: .venv with the project and its dependencies (.venv/bin/pokerctl is the CLI)
# make lint:    install, then ruff (pyflakes, bugbear, import order) and mypy (shared/; strict on
#               shared/poker), both configured in pyproject.toml
# make test:    install, lint, Debian's chromium if missing, then every test
# make demo:    install, then bots play hands of every game and the audit is printed
# make bench:   install, then the benchmarks (figures printed, nothing asserted)
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.install-stamp

GEN := gen
PROTO_FILES := $(shell find protos -name '*.proto')
PROTO_STAMP := $(GEN)/.stamp

.PHONY: install protos lint browser test demo bench clean

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

test: install lint browser
	$(BIN)/python -m pytest -q

# The web pages are tested in Debian's chromium, driven by Playwright (which downloads no
# browser of its own): installed here when missing.
browser:
	@command -v chromium >/dev/null || { \
		apt-get update -q && DEBIAN_FRONTEND=noninteractive apt-get install -y -q chromium; }

demo: install
	$(BIN)/pokerctl demo

bench: install
	$(BIN)/python -m bench

clean:
	rm -rf $(VENV) $(GEN) build *.egg-info .pytest_cache .hypothesis .mypy_cache .ruff_cache

# The two commands of the quick start: `make demo` and `make test`. Everything a fresh machine
# needs is installed here, into .venv.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: venv demo test stress clean bench iree-venv conformance

venv: $(STAMP)

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet -e '.[test,torch,onnx,zoo]'
	touch $(STAMP)

demo: $(STAMP)
	PATH=$(CURDIR)/$(BIN):$$PATH bash samples/run_all.sh

test: $(STAMP)
	$(BIN)/python -m pytest tests
	PATH=$(CURDIR)/$(BIN):$$PATH $(BIN)/lit -sv tests

# The reliability tests at their long sizes: thousands of mutated module files and MLIR inputs,
# 10,000-invocation memory runs, 8 threads x 1,000 invocations (docs/reliability.md).
stress: $(STAMP)
	$(BIN)/python -m pytest tests/reliability --stress

# IREE's e2e check programs (../shared/iree-e2e) on llvm-cpu/local-task and vmvx/local-sync:
# the table per folder and target, each failure with its reason, results in conformance/results/;
# fails only if a file of conformance/passing.txt (the files `make test` keeps passing) fails.
# CONFORMANCE_FLAGS="--folders linalg --targets llvm-cpu" runs a part of it.
CONFORMANCE_FLAGS ?=

conformance: $(STAMP)
	$(BIN)/python -m conformance --require-list $(CONFORMANCE_FLAGS)

# The benchmark suite: weir against numpy (and IREE with IREE_VENV=.venv-iree) on this machine,
# with the machine's own bandwidth and FLOP/s limits; then compile time per 1,000 ops of programs
# 1,000 to 20,000 ops long (benchmarks/compile_time.py); writes benchmarks/results/.
IREE_VENV ?=
IREE_VERSION := 3.13.0

bench: $(STAMP)
	$(BIN)/python -m benchmarks $(if $(IREE_VENV),--iree-venv $(IREE_VENV))
	$(BIN)/python -m benchmarks.compile_time $(if $(IREE_VENV),--iree-venv $(IREE_VENV))

# IREE's own compiler and runtime as the peer for `make bench IREE_VENV=.venv-iree`; kept apart
# from .venv because weir never imports IREE.
iree-venv: .venv-iree/.installed

.venv-iree/.installed:
	$(PYTHON) -m venv .venv-iree
	.venv-iree/bin/pip install --quiet iree-base-compiler==$(IREE_VERSION) iree-base-runtime==$(IREE_VERSION)
	touch $@

clean:
	rm -rf $(VENV) build *.egg-info

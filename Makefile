# The two commands of the quick start: `make demo` and `make test`. Everything a fresh machine
# needs is installed here, into .venv.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: venv demo test test-compiler test-runtime clean

venv: $(STAMP)

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet -e '.[test]'
	touch $(STAMP)

demo: $(STAMP)
	PATH=$(CURDIR)/$(BIN):$$PATH bash samples/run_all.sh

test: $(STAMP)
	$(BIN)/python -m pytest tests
	PATH=$(CURDIR)/$(BIN):$$PATH $(BIN)/lit -sv tests

clean:
	rm -rf $(VENV) build *.egg-info

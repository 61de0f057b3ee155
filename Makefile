# devplace: `make demo` runs the colocate demonstration, `make test` runs every test.
# Both set up what they need first (Python venv with TensorFlow, and Julia for the tests).

PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.devplace-installed

.PHONY: setup setup-python setup-julia demo test test-python lint bench clean

setup: setup-python setup-julia

setup-python: $(STAMP)

$(STAMP): pyproject.toml
	@test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e '.[dev]'
	@touch $(STAMP)

setup-julia:
	@tools/setup-julia.sh > /dev/null

demo: setup-python
	$(VENV)/bin/devplace demo --out devplace-demo

test: setup
	DEVPLACE_JULIA="$$(tools/setup-julia.sh)" $(PY) -m pytest

lint: setup-python
	$(VENV)/bin/ruff check python tests benchmarks examples
	$(VENV)/bin/ruff format --check python tests benchmarks examples

clean:
	rm -rf $(VENV) .julia-runtime devplace-demo .pytest_cache

# devplace: `make demo` runs the colocate demonstration, `make test` runs every test,
# `make test-fast` the fast tier (no Julia, clusters, notebooks: tests marked slow are left out).
# Both set up what they need first (Python venv with TensorFlow, and Julia for the tests).

PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.devplace-installed

.PHONY: setup setup-python setup-julia demo notebook test test-fast test-python lint bench clean

setup: setup-python setup-julia

setup-python: $(STAMP)

# The `gpu` extra (TensorFlow's CUDA libraries) when an NVIDIA driver answers, else without it.
# tensorflow-cpu (older devplace) and tensorflow both write site-packages/tensorflow/: the old
# one goes first, so the two never mix.
$(STAMP): pyproject.toml
	@test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	@if $(PY) -m pip show --quiet tensorflow-cpu >/dev/null 2>&1; then \
		echo "setup: removing tensorflow-cpu (replaced by tensorflow)"; \
		$(PY) -m pip uninstall --quiet --yes tensorflow-cpu tensorflow 2>&1 | grep -v 'not installed' || true; \
	fi
	@if nvidia-smi >/dev/null 2>&1; then \
		echo "setup: NVIDIA driver found: installing devplace[gpu] (TensorFlow with CUDA libraries)"; \
		$(PY) -m pip install --quiet -e '.[dev,gpu,tensorboard,notebook]'; \
	else \
		echo "setup: no NVIDIA driver (nvidia-smi): installing devplace without the gpu extra (TensorFlow's CUDA libraries): TensorFlow runs on the CPU"; \
		$(PY) -m pip install --quiet -e '.[dev,tensorboard,notebook]'; \
	fi
	@touch $(STAMP)

setup-julia:
	@tools/setup-julia.sh > /dev/null

demo: setup-python
	$(VENV)/bin/devplace demo --out devplace-demo

# The example notebooks in Jupyter, in the venv's kernel (the `notebook` extra). Jupyter refuses
# to run as root without --allow-root (a fresh machine as in README); for others it changes nothing.
notebook: setup-python
	$(VENV)/bin/jupyter notebook --allow-root examples/notebooks

test: setup
	DEVPLACE_JULIA="$$(tools/setup-julia.sh)" $(PY) -m pytest

test-fast: setup-python
	$(PY) -m pytest -m "not slow"

lint: setup-python
	$(VENV)/bin/ruff check python tests benchmarks examples
	$(VENV)/bin/ruff format --check python tests benchmarks examples

clean:
	rm -rf $(VENV) .julia-runtime devplace-demo .pytest_cache

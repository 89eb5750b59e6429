# Two set-up commands (README): `make repro` runs the pipeline, `make test` the test suite.
# Both create .venv and install the project first.
#
# torch: on a machine without torch, a bare `pip install torch` pulls the CUDA build and
# several GB of NVIDIA packages. We install $(TORCH) first when torch is missing; the
# default is the CPU wheel for this machine kind. On a GPU box: `make TORCH=torch ...`.

PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
TORCH ?= torch==2.13.0
PIP := $(BIN)/python -m pip --disable-pip-version-check -q
PYTEST_ARGS ?=

.PHONY: install repro test bench clean-venv

install: $(VENV)/.installed

$(VENV)/.installed: pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -c "import torch" 2>/dev/null || $(PIP) install "$(TORCH)"
	$(PIP) install -e ".[dev]"
	touch $@

repro: install
	PATH="$(abspath $(BIN)):$$PATH" $(BIN)/dvc repro

test: install
	PATH="$(abspath $(BIN)):$$PATH" $(BIN)/python -m pytest $(PYTEST_ARGS)

bench: install  # after `make repro`: the decoding and ONNX benches read models/
	$(BIN)/python bench/tokenize_cache.py
	$(BIN)/python bench/train_throughput.py
	$(BIN)/python bench/decode_speed.py
	$(BIN)/python bench/decode_peers.py

clean-venv:
	rm -rf $(VENV)

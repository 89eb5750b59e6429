# Two set-up commands (README): `make repro` runs the pipeline, `make test` the test suite.
# Both create .venv and install the project first, from requirements.lock: the exact versions,
# with hashes, that the pipeline was last resolved and tested with (torch: this machine kind's
# CPU wheel). `make lock` refreshes the lock after a change to pyproject.toml's dependencies;
# `make install` refuses a lock that pyproject.toml has moved away from (tools/lockfile.py).
#
# Elsewhere (a GPU box, another platform): `make install UNLOCKED=1 TORCH=torch` installs from
# pyproject.toml's ranges instead, $(TORCH) first when torch is missing (a bare `pip install
# torch` on a machine without it pulls the CUDA build and several GB of NVIDIA packages).

PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
TORCH ?= torch==2.13.0
LOCK := requirements.lock
UNLOCKED ?=
PIP := $(BIN)/python -m pip --disable-pip-version-check -q
# The suite runs in a shuffled order (pytest-randomly), fixed here so a CI failure reproduces;
# `make test TEST_SEED=$$RANDOM` tries another order (the seed is printed at the top of the run).
TEST_SEED ?= 20261125
# Two worker processes (pytest-xdist), a test module on one of them, each with one OpenMP/MKL thread:
# on this 2-core machine the suite took 518 s so against 991 s in one process (the end-to-end tests wait
# on subprocesses and servers as much as they compute; two workers with torch's default two threads
# each were not faster than one process). `make test TEST_WORKERS=0` runs it in one process.
TEST_WORKERS ?= 2
PYTEST_ARGS ?=

.PHONY: js peers peers-lock install graph repro repro-general repro-pairs finetune blind blind-pairs lint test test-faults test-isa bench gpu-check lock clean-venv

install: $(VENV)/.installed

$(VENV)/.installed: pyproject.toml $(LOCK)
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
ifeq ($(UNLOCKED),)
	$(BIN)/python tools/lockfile.py check
	$(PIP) install --require-hashes --no-deps -r $(LOCK)
	$(PIP) install --no-deps -e .
else
	$(BIN)/python -c "import torch" 2>/dev/null || $(PIP) install "$(TORCH)"
	$(PIP) install -e ".[dev]"
endif
	touch $@

lock:
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(PIP) install "pip-tools>=7.4"
	echo "$(TORCH)" > $(VENV)/lock-constraints.txt
	$(BIN)/pip-compile --quiet --generate-hashes --allow-unsafe --strip-extras --extra dev --extra bench \
		--constraint $(VENV)/lock-constraints.txt --no-emit-index-url --no-emit-find-links \
		--output-file $(LOCK) pyproject.toml
	$(BIN)/python tools/lockfile.py stamp

# The real Argos Translate and LibreTranslate, each in a venv of its own, from its lock (tests/peers/*.lock):
# tests/export/test_portable.py installs and serves `nmt export-argos` packages with them (.ci/run builds them
# first; elsewhere those tests skip, naming this target); transformers 4 runs pipeline("translation") on the
# `nmt export-hf` folder (transformers 5 removed it). `make peers-lock` refreshes the locks.
PEERS_DIR ?= .venv-peers
PEERS := argostranslate libretranslate transformers4
peers: $(foreach p,$(PEERS),$(PEERS_DIR)/$(p)/.installed)

$(PEERS_DIR)/%/.installed: tests/peers/%.lock
	test -x $(PEERS_DIR)/$*/bin/python || $(PYTHON) -m venv $(PEERS_DIR)/$*
	$(PEERS_DIR)/$*/bin/python -m pip --disable-pip-version-check -q install --require-hashes --no-deps -r $<
	touch $@

# The JavaScript consumer (js/: Node and the browser; docs/export.md), from its lock file: npm ci.
js: js/node_modules/.package-lock.json

js/node_modules/.package-lock.json: js/package-lock.json js/package.json
	cd js && npm ci --no-audit --no-fund
	touch $@

peers-lock: install
	$(PIP) install "pip-tools>=7.4"
	echo "$(TORCH)" > $(VENV)/lock-constraints.txt
	for p in $(PEERS); do $(BIN)/pip-compile --quiet --generate-hashes --allow-unsafe --strip-extras \
		--constraint $(VENV)/lock-constraints.txt --no-emit-index-url --no-emit-find-links \
		--output-file tests/peers/$$p.lock tests/peers/$$p.in || exit 1; done

# The four dvc.yaml files, written from the table of models (pipeline/models.yaml) and the stages
# (pipeline/stages.yaml) by tools/graph.py; docs/pipeline.md: The stage graph. A no-op when they are in step.
graph: install
	$(BIN)/python -m tools.graph

# DVC through nmt/files/dvclock.py: every dvc.lock it may rewrite mended from its verified copy and saved, before
# and after (a run killed while DVC writes a lock loses no entry; docs/pipeline.md: When a run dies)
DVC_LOCKS := dvc.lock general/dvc.lock pairs/dvc.lock finetune/dvc.lock
DVC = PATH="$(abspath $(BIN)):$$PATH" $(BIN)/python -m nmt.files.dvclock $(foreach l,$(DVC_LOCKS),--lock $(l)) -- \
	$(BIN)/dvc

repro: graph
	$(BIN)/nmt check-params params.yaml
	$(DVC) repro

# The general configuration (docs/data.md): the pipeline on the mix of real corpora in general/params.yaml.
# Offline, point NMT_DATA_MIRROR at a folder with one sub-folder per corpus (../shared/data).
repro-general: graph
	$(BIN)/nmt check-params general/params.yaml
	$(DVC) repro general/dvc.yaml

# The other language pairs (docs/pairs.md): each pair of pairs/<pair>.yaml, both its directions, through the
# stages of pairs/dvc.yaml. PAIR=fr-en: that pair only (its data stages and both directions to the end).
# Offline, point NMT_DATA_MIRROR at ../shared/data (the multi30k-fr-cs folder).
# A pair on params.yaml's corpus (de-en) has only the direction the default pipeline does not train (en-de).
PAIR ?=
PAIR_RUNS = $(shell sed -n '/^  train:/,/^    do:/s/^      \([a-z-]*\):$$/\1/p' pairs/dvc.yaml)
PAIR_TARGETS = $(if $(PAIR),$(foreach d,$(filter $(PAIR_RUNS),$(PAIR) $(lastword $(subst -, ,$(PAIR)))-$(firstword \
	$(subst -, ,$(PAIR)))),pairs/dvc.yaml:ctranslate2@$(d) pairs/dvc.yaml:profile@$(d)),pairs/dvc.yaml)
repro-pairs: graph
	@test -z "$(PAIR)" || test -f pairs/$(PAIR).yaml || { echo "make repro-pairs: no pairs/$(PAIR).yaml; the pairs are: \
	$$(ls pairs | sed -n 's/\.yaml$$//p' | grep -v '^dvc$$' | tr '\n' ' ')(docs/pairs.md: adding a pair)" >&2; exit 2; }
	$(BIN)/nmt check-params $(if $(PAIR),pairs/$(PAIR).yaml,$(filter-out pairs/dvc.yaml,$(wildcard pairs/*.yaml)))
	$(DVC) repro $(PAIR_TARGETS)

# Fine-tunes (docs/training.md, Fine-tuning): each of finetune/dvc.yaml, a trained parent continued on the corpus
# of finetune/<data>.yaml and compared with it; DVC trains a parent that is not there yet first (the general
# models: `make repro-general`). FINETUNE=multi30k-de-en: that fine-tune only.
FINETUNE ?=
finetune: graph
	@test -z "$(FINETUNE)" || grep -q "^      $(FINETUNE):$$" finetune/dvc.yaml || { echo "make finetune: no fine-tune \
	$(FINETUNE) in finetune/dvc.yaml; they are: $$(sed -n '/^  parent:/,/^    do:/s/^      \([a-z0-9-]*\):$$/\1/p' \
	finetune/dvc.yaml | tr '\n' ' ')" >&2; exit 2; }
	$(BIN)/nmt check-params $(filter-out finetune/dvc.yaml,$(wildcard finetune/*.yaml))
	$(DVC) repro $(if $(FINETUNE),finetune/dvc.yaml:compare@$(FINETUNE),finetune/dvc.yaml)

# The blind sets (sources without references, $(BLIND)/README.md): each file translated with the general
# package of its direction into reports/blind/<name>.<target language>, one line out per line in.
# DIRECTIONS=de-en: only the sets of the directions named (a direction not trained yet has no package).
BLIND ?= ../shared/data/blind
DIRECTIONS ?= de-en en-de
blind: install
	mkdir -p reports/blind
	for src in $(foreach d,$(DIRECTIONS),$(BLIND)/$(d).*.$(firstword $(subst -, ,$(d)))); do \
		name=$$(basename $$src); dir=$${name%%.*}; tgt=$${dir#*-}; \
		$(BIN)/nmt translate --model models/general/$$dir/onnx --direction $$dir --input $$src --output reports/blind/$${name%.*}.$$tgt || exit 1; \
	done

# The other pairs' blind sets ($(BLIND_PAIRS)/README.md): each file translated with its direction's package of
# pairs/dvc.yaml into reports/blind-pairs/<name>.<target language>, one line out per line in.
BLIND_PAIRS ?= ../shared/data/blind-pairs
PAIR_DIRECTIONS ?= fr-en en-fr cs-en en-cs
blind-pairs: install
	mkdir -p reports/blind-pairs
	for src in $(foreach d,$(PAIR_DIRECTIONS),$(BLIND_PAIRS)/$(d).*.$(firstword $(subst -, ,$(d)))); do \
		name=$$(basename $$src); dir=$${name%%.*}; tgt=$${dir#*-}; \
		$(BIN)/nmt translate --model models/pairs/$$dir/onnx --direction $$dir --input $$src --output reports/blind-pairs/$${name%.*}.$$tgt || exit 1; \
	done

# ruff with the rules in pyproject.toml ([tool.ruff]) on all the Python here, the dvc.yaml files in step with
# pipeline/ (make graph), and mypy over nmt/ and flows/ ([tool.mypy]) with the count of its suppressions, which
# must not grow; .ci/run runs it before the tests.
MYPY_IGNORES_MAX ?= 18
lint: install
	$(BIN)/ruff check nmt flows tests tools bench examples
	$(BIN)/python -m tools.graph --check
	$(BIN)/mypy
	@n=$$(grep -rEo "type: *ignore" nmt flows | wc -l); echo "mypy: $$n '# type: ignore' in nmt/ and flows/ (ceiling $(MYPY_IGNORES_MAX))"; \
	  test $$n -le $(MYPY_IGNORES_MAX) || { echo "make lint: $$n '# type: ignore', over the ceiling of $(MYPY_IGNORES_MAX): type the code instead" >&2; exit 1; }

test: install
	PATH="$(abspath $(BIN)):$$PATH" OMP_NUM_THREADS=1 MKL_NUM_THREADS=1 $(BIN)/python -m pytest \
		--randomly-seed=$(TEST_SEED) $(if $(filter-out 0,$(TEST_WORKERS)),-n $(TEST_WORKERS) --dist loadfile) $(PYTEST_ARGS)

# The injected-fault tests alone (marked fault: kills, damaged files, a full disk, a drain; part of `make test`),
# e.g. `make test-faults PYTEST_ARGS=--host-record=bench/results/hosts` for docs/pipeline.md's fault-suite block.
test-faults: install
	PATH="$(abspath $(BIN)):$$PATH" OMP_NUM_THREADS=1 MKL_NUM_THREADS=1 $(BIN)/python -m pytest -m fault \
		--randomly-seed=$(TEST_SEED) $(if $(filter-out 0,$(TEST_WORKERS)),-n $(TEST_WORKERS) --dist loadfile) $(PYTEST_ARGS)

# The numerically sensitive tests (marked isa: engines compared line for line, a model's own scores) again with
# the instruction set each library dispatches to capped at AVX2, so one host also computes what an AVX2 host
# would: torch's ATen kernels, oneDNN (torch's and CTranslate2's), CTranslate2, and MKL on Intel CPUs (MKL
# ignores it elsewhere). ONNX Runtime has no such switch. Names and sources: docs/pipeline.md#other-hosts.
ISA_ENV ?= ATEN_CPU_CAPABILITY=avx2 ONEDNN_MAX_CPU_ISA=AVX2 CT2_FORCE_CPU_ISA=AVX2 MKL_ENABLE_INSTRUCTIONS=AVX2
test-isa: install
	PATH="$(abspath $(BIN)):$$PATH" OMP_NUM_THREADS=1 MKL_NUM_THREADS=1 $(ISA_ENV) $(BIN)/python -m pytest -m isa \
		--randomly-seed=$(TEST_SEED) $(if $(filter-out 0,$(TEST_WORKERS)),-n $(TEST_WORKERS) --dist loadfile) $(PYTEST_ARGS)

# The benches that guard a claim the README or docs/ make today (a speed or memory ratio measured side by side
# in one run, or a behaviour's figures), each as `python -m bench.<name>` with the arguments of its committed run,
# then the default pipeline's generated blocks re-rendered from them; commit bench/results, README.md and docs/
# afterwards. docs/benchmarks.md#what-writes-what lists which bench writes which file and which block shows it,
# and the finished studies whose results stay committed (their code at the commit that made them). Needs
# `make repro` (data/, models/) and, for markup and terminology, models/general/de-en (`make repro-general`);
# each takes minutes, the whole about an hour and a half on 2 cores: run nothing else meanwhile. Not run here:
# the GPU checks (tools/gpu/, `make gpu-check` on a lent GPU) and examples/locustfile.py (Locust's, no result).
SHARED_DATA ?= ../shared/data
# bench/hostile.py's committed run served the tests' tiny copy-task package (tests/support/onnx.py's
# shared_package; parsing and limits do not depend on the model), built here once
HOSTILE_PACKAGE ?= .cache/bench-hostile
# bench.js_consumer's package: tests/support/stages.py's portable_model, the SentencePiece smoke model
JS_PACKAGE ?= .cache/bench-js
bench: install js
	$(BIN)/python -m bench.tokenize_cache  # downloads the corpus: set NMT_DATA_MIRROR offline
	$(BIN)/python -m bench.train_throughput
	$(BIN)/python -m bench.decode_speed
	$(BIN)/python -m bench.decode_peers
	$(BIN)/python -m bench.scale  # Multi30k from data/raw (the download stage's), or NMT_DATA_MIRROR
	$(BIN)/python -m bench.repro_time  # this host's record in bench/results/repro_hosts/; needs NMT_DATA_MIRROR
	$(BIN)/python -m bench.first_try  # ~10 minutes; reads ../shared/data
	$(BIN)/python -m bench.serve_load --soak-s 300 --variants "--decoders 0" "--max-wait-ms 0" "--max-wait-ms 5" "--max-batch 64"
	$(BIN)/python -m bench.serve_load --int8 --soak-s 0
	PYTHONPATH=tests $(BIN)/python -c 'import sys, pathlib, support.onnx as o; o.shared_package(pathlib.Path(sys.argv[1]))' $(HOSTILE_PACKAGE)
	$(BIN)/python -m bench.hostile --model $(HOSTILE_PACKAGE)/export/onnx
	$(BIN)/python -m bench.markup --model models/general/de-en/onnx
	$(BIN)/python -m bench.terminology --model models/general/de-en/onnx
	PYTHONPATH=tests $(BIN)/python -c 'import sys, pathlib, support.stages as s; s.portable_model(pathlib.Path(sys.argv[1]))' $(JS_PACKAGE)
	$(BIN)/python -m bench.js_consumer --package $(JS_PACKAGE)/models/onnx --lines ../shared/data/multi30k-fr-cs/test_2016_flickr.fr.gz --skip 300 --screenshot bench/results/js_consumer_page.png --label "the test suite's SentencePiece smoke model, not a shipped model"
	PATH="$(abspath $(BIN)):$$PATH" $(BIN)/dvc repro --single-item publish

# The GPU path's checks on a lent GPU (docs/training.md, tools/gpu/check.py): the data stages, then the bundle
# .gpu/ (binarised Multi30k, vocabularies, the test set; git-ignored) that the device tool carries; the two device
# calls and the collection of their figures are printed at the end. Offline: set NMT_DATA_MIRROR (../shared/data/multi30k).
GPU_RUNS := default profile cudnn_attention selected_positions cuda_graphs

gpu-check: install
	PATH="$(abspath $(BIN)):$$PATH" $(BIN)/dvc repro binarize
	$(BIN)/python -m tools.gpu.check bundle --out .gpu
	@echo 'next, with the device tool, two calls on one warm machine (carry=[".gpu"]; the parts are cut by timeout -k, not the call):'
	@echo '  run(command="timeout -k 10 450 python3 -m tools.gpu.device --part a --skip tests --bundle .gpu --out $$OUT", timeout_s=480)'
	@echo '  run(command="timeout -k 10 400 python3 -m tools.gpu.device --part ab --skip mfu $(GPU_RUNS) --bundle .gpu --out $$OUT", timeout_s=430)'
	@echo 'after each: $(BIN)/python -m tools.gpu.check collect --from <files_at>; give_back at the end'
	@echo 'part c (a lease of its own): bundle with --general de-en, then run(command="timeout -k 10 540 python3 -m tools.gpu.device --part c --bundle .gpu --out $$OUT", timeout_s=570)'

clean-venv:
	rm -rf $(VENV)

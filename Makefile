# torch_accel: `make demo` and `make test` do all the set-up on a fresh machine.
VENV    ?= .venv
PY      := $(VENV)/bin/python
PIP     := $(VENV)/bin/pip
BUILD   := build/cmake
export PATH := $(abspath $(VENV))/bin:$(PATH)
export MAX_JOBS ?= $(shell nproc)

.PHONY: demo test test-cpp test-py bench build sysdeps clean gpu-check

# System packages: googletest for the C++ tests and ccache for quick rebuilds (Debian).
sysdeps:
	@if [ ! -f /usr/include/gtest/gtest.h ] || ! command -v ccache >/dev/null; then \
	  if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null; then \
	    (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq libgtest-dev ccache) >/dev/null; \
	  else echo "note: install libgtest-dev and ccache for the C++ tests and quick rebuilds"; fi; \
	fi

$(PY):
	python3 -m venv $(VENV)

$(VENV)/.deps: requirements.txt | $(PY)
	$(PIP) install -q -r requirements.txt
	@# The CUDA plugin compiles whenever nvcc is here; cuBLAS headers come from the
	@# nvidia-cublas wheel when the toolkit has none.
	@if command -v nvcc >/dev/null && ! ls $$(dirname $$(readlink -f $$(command -v nvcc)))/../include/cublas_v2.h >/dev/null 2>&1 \
	   && ! ls /usr/local/cuda*/include/cublas_v2.h >/dev/null 2>&1; then \
	  $(PIP) install -q nvidia-cublas || echo "note: no cuBLAS headers; the CUDA plugin will be skipped"; fi
	touch $@

build: sysdeps $(VENV)/.deps
	$(PIP) install -q --no-build-isolation --no-deps -e .

test-cpp: build
	cd $(BUILD) && ctest --output-on-failure

test-py: build
	$(PY) -m pytest -q tests

test: test-cpp test-py

# The main job: LoRA fine-tuning of a small Llama on accel (plots and adapter in lora-out/).
demo: build
	$(PY) -m torch_accel info
	$(PY) examples/lora_finetune.py --device accel --out lora-out

bench: build
	$(PY) benchmarks/run_all.py --out bench-results

# On a GPU machine with torch (CUDA build), nvcc, cmake and ninja: build, test on the cuda
# driver and benchmark next to torch.cuda, results in DIR (no venv, no registry needed).
DIR ?= gpu-check
gpu-check:
	scripts/gpu_check.sh $(DIR)

clean:
	rm -rf build *.egg-info torch_accel/*.so

# The full OpInfo sweep (all samples, float32 and bfloat16): docs/op_coverage.{json,md}.
.PHONY: coverage
coverage: build
	$(PY) -m torch_accel coverage --out docs/

# torch_accel: `make demo` and `make test` do all the set-up on a fresh machine.
VENV    ?= .venv
PY      := $(VENV)/bin/python
PIP     := $(VENV)/bin/pip
BUILD   := build/cmake
export PATH := $(abspath $(VENV))/bin:$(PATH)
export MAX_JOBS ?= $(shell nproc)
# ccache hashes paths relative to the checkout, so a fresh clone reuses earlier compilations.
export CCACHE_BASEDIR ?= $(CURDIR)

.PHONY: demo test test-cpp test-py bench build sysdeps clean gpu-check coverage test-asan test-asan-cpp \
        test-tsan test-protect lint format build-asan-cpp build-tsan sanitizer-builds

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
	@# The NCCL plugin likewise, with NCCL's headers from the nvidia-nccl-cu13 wheel.
	@if command -v nvcc >/dev/null && ! ls $$(dirname $$(readlink -f $$(command -v nvcc)))/../include/nccl.h >/dev/null 2>&1 \
	   && ! ls /usr/local/cuda*/include/nccl.h /usr/include/nccl.h >/dev/null 2>&1; then \
	  $(PIP) install -q nvidia-nccl-cu13 || echo "note: no NCCL headers; the NCCL plugin will be skipped"; fi
	touch $@

build: sysdeps $(VENV)/.deps
	$(PIP) install -q --no-build-isolation --no-deps -e .

test-cpp: build
	cd $(BUILD) && ctest --output-on-failure

test-py: build
	$(PY) -m pytest -q tests

test: test-cpp test-py

# The code's lint and format: Python by ruff (settings in pyproject.toml), C++ and CUDA by
# clang-format (.clang-format). `make format` applies both formats.
PY_SOURCES := torch_accel tests benchmarks examples scripts setup.py
CPP_SOURCES = $(shell git ls-files 'csrc/*.h' 'csrc/*.cpp' 'csrc/*.cu' 'csrc/*.cuh' 'tests/cpp/*.h' 'tests/cpp/*.cpp')
lint: $(VENV)/.deps
	$(VENV)/bin/ruff check $(PY_SOURCES)
	$(VENV)/bin/ruff format --check $(PY_SOURCES)
	@echo clang-format --dry-run -Werror '<the C++ and CUDA sources>'
	@$(VENV)/bin/clang-format --dry-run -Werror $(CPP_SOURCES)

format: $(VENV)/.deps
	$(VENV)/bin/ruff check --fix $(PY_SOURCES)
	$(VENV)/bin/ruff format $(PY_SOURCES)
	$(VENV)/bin/clang-format -i $(CPP_SOURCES)

# --- Reliability checks (see tests/test_reliability_*.py) ---------------------------------
# Sanitizer builds live in their own trees (build/asan, build/tsan) and never replace the
# torch_accel/_C*.so of the normal build. The CUDA plugin is left out: nvcc takes no -fsanitize.
ASAN_DIR := build/asan
ASAN_PKG := $(ASAN_DIR)/pkg
SAN_CMAKE_ARGS := -DACCEL_WITH_CUDA=OFF

# ASan+UBSan: the extension and every C++ test, then the Python suite against a copy of the
# package holding the sanitized _C.so. Python is not instrumented, so libasan is preloaded,
# with libstdc++ (else ASan cannot intercept __cxa_throw and the first C++ exception aborts).
# The LoRA tests are left out for time (they run in `make test`).
# detect_leaks=0: CPython and torch keep interned objects, registries and thread-local caches
# alive until exit on purpose, and LeakSanitizer would report those; leaks of our own show up
# in the allocator's stats tests instead (num_device_alloc == num_device_free).
test-asan: sysdeps $(VENV)/.deps
	TORCH_ACCEL_SANITIZE="address;undefined" TORCH_ACCEL_BUILD_DIR=$(abspath $(ASAN_DIR)/cmake) \
	  TORCH_ACCEL_CMAKE_ARGS="$(SAN_CMAKE_ARGS)" \
	  $(PY) setup.py -q build_ext --build-lib $(ASAN_PKG) --build-temp $(ASAN_DIR)/tmp
	tar --exclude='*.so' --exclude=__pycache__ -cf - torch_accel tests examples | tar -xf - -C $(ASAN_PKG)
	cd $(ASAN_DIR)/cmake && ctest --output-on-failure
	cd $(ASAN_PKG) && LD_PRELOAD="$$($(CXX) -print-file-name=libasan.so) $$($(CXX) -print-file-name=libstdc++.so)" \
	  ASAN_OPTIONS=detect_leaks=0:abort_on_error=1:halt_on_error=1 \
	  UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
	  $(abspath $(PY)) -m pytest -q -p no:cacheprovider tests --ignore=tests/test_lora_finetune.py

# ASan+UBSan on the C++ tests alone (runtime, kernels, allocator): minutes, so CI runs it on
# every pass; the full run above (extension + Python suite) takes about half an hour.
build-asan-cpp: sysdeps
	cmake -S . -B build/asan-cpp -DACCEL_SANITIZE="address;undefined" -DACCEL_SANITIZE_OPT=-O0 \
	  $(SAN_CMAKE_ARGS) \
	  -DTORCH_INCLUDE_DIRS=$$($(PY) -c "import torch, os; print(os.path.dirname(torch.__file__) + '/include')") \
	  -DTORCH_LIBRARY_DIR=$$($(PY) -c "import torch, os; print(os.path.dirname(torch.__file__) + '/lib')") \
	  $$(command -v ninja >/dev/null && echo -G Ninja) >/dev/null
	cmake --build build/asan-cpp -j $(MAX_JOBS) --target test_runtime test_kernels test_allocator

test-asan-cpp: build-asan-cpp
	cd build/asan-cpp && ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 \
	  UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 ctest --output-on-failure

# TSan: the runtime and allocator C++ tests (the threaded layers; torch is not built with TSan).
build-tsan: sysdeps
	cmake -S . -B build/tsan -DACCEL_SANITIZE=thread $(SAN_CMAKE_ARGS) -DCMAKE_BUILD_TYPE=RelWithDebInfo \
	  $$(command -v ninja >/dev/null && echo -G Ninja) >/dev/null
	cmake --build build/tsan -j $(MAX_JOBS) --target test_runtime test_allocator

test-tsan: build-tsan
	TSAN_OPTIONS=halt_on_error=1:second_deadlock_stack=1 ACCEL_FUZZ_OPS=200000 build/tsan/test_runtime
	TSAN_OPTIONS=halt_on_error=1:second_deadlock_stack=1 ACCEL_FUZZ_OPS=200000 build/tsan/test_allocator

# Both sanitizer trees, built and not run: CI compiles them in the background while the
# Python suites, which keep about one core busy, run.
sanitizer-builds: build-asan-cpp build-tsan

# The Python suite with device memory inaccessible to host code outside the driver. Left out
# for CI's time: the LoRA tests (protect mode re-mprotects every segment around each queued
# work item, which makes their thousands of small launches take over ten minutes), the model
# zoo (the same, for whole models) and the multi-process distributed tests (minutes of process
# start-up; their device work is the driver's copies, which the single-process tests cover)
# and the OpInfo conformance slice (thousands of one-op calls that check values and errors,
# mostly through the fallback; `make test` runs it), and torch.compile's tests (three minutes of
# Inductor compiling; test_protect_mode_kernels_do_not_fault runs compiled kernels in this mode).
test-protect: build
	TORCH_ACCEL_PROTECT=1 $(PY) -m pytest -q tests --ignore=tests/test_lora_finetune.py \
	  --ignore=tests/models --ignore=tests/test_compile.py --ignore=tests/test_distributed.py \
	  --ignore=tests/test_distributed_faults.py --ignore=tests/test_distributed_training.py \
	  -k "not test_conformance"

# The main job: LoRA fine-tuning of a small Llama on accel (plots and adapter in lora-out/).
demo: build
	$(PY) -m torch_accel info
	$(PY) examples/lora_finetune.py --device accel --out lora-out

bench: build
	$(PY) benchmarks/run_all.py --out bench-results

# On a GPU machine with torch (CUDA build), nvcc, cmake and ninja: build for that GPU's
# architecture, smoke test, op tests on the cuda driver, benchmarks next to torch.cuda, compile
# tests; 8 minutes by the steps' limits, DIR/summary.json rewritten after each step (no venv,
# no registry needed). `GPU_CHECK_ARGS=--dry-run` runs the plan with echoes instead.
DIR ?= gpu-check
PYTHON ?= python3
gpu-check:
	$(PYTHON) scripts/gpu_check.py $(DIR) $(GPU_CHECK_ARGS)

clean:
	rm -rf build *.egg-info torch_accel/*.so

# The full OpInfo sweep (torch_accel/devtools/coverage.py; all samples, float32, bfloat16,
# float16, complex64, int64): docs/op_coverage.{json,md}; then TestCommon's checks on every op
# and sample (tests/test_opinfo.py, TORCH_ACCEL_CONFORMANCE=full), held to
# tests/conformance_expected_failures.txt.
.PHONY: coverage
coverage: build
	$(PY) -m torch_accel coverage --out docs/
	TORCH_ACCEL_CONFORMANCE=full $(PY) -m pytest -q -p no:cacheprovider tests/test_opinfo.py -k test_conformance

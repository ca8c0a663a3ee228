#!/usr/bin/env bash
# One prepared check for a machine with an NVIDIA GPU (torch CUDA build, nvcc, cmake and
# ninja installed; no package registry needed). Builds the extension and the CUDA plugin
# against the installed torch, runs the op tests on the cuda driver, runs the side-by-side
# benchmarks, checks NCCL, and writes everything into DIR. Each step has a timeout; the
# whole run fits in 8 minutes.
#
#   scripts/gpu_check.sh DIR        (or: make gpu-check DIR=...)
set -u
DIR=${1:-gpu-check}
mkdir -p "$DIR"
DIR=$(cd "$DIR" && pwd)
cd "$(dirname "$0")/.."
PY=${PYTHON:-python3}
export MAX_JOBS=${MAX_JOBS:-$(nproc)}
export TORCH_ACCEL_BUILD_DIR=${TORCH_ACCEL_BUILD_DIR:-$PWD/build/cmake}
export TORCH_DEVICE_BACKEND_AUTOLOAD=0   # tests import torch_accel themselves
export PYTHONPATH=$PWD${PYTHONPATH:+:$PYTHONPATH}

step() {  # step NAME SECONDS CMD...: runs CMD with a timeout, logs to DIR/NAME.log
  local name=$1 limit=$2; shift 2
  local t0=$(date +%s)
  timeout "$limit" "$@" >"$DIR/$name.log" 2>&1
  local rc=$?
  echo "$name rc=$rc $(( $(date +%s) - t0 ))s"
  echo "\"$name\": {\"rc\": $rc, \"seconds\": $(( $(date +%s) - t0 ))}," >>"$DIR/.steps"
  tail -n 3 "$DIR/$name.log"
  return $rc
}

rm -f "$DIR/.steps"
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv >"$DIR/gpu.txt" 2>&1
step build 195 "$PY" setup.py -q build_ext --inplace
step probe 25 env TORCH_ACCEL_DRIVER=cuda "$PY" -c "
import torch, torch_accel
assert torch_accel.driver() == 'cuda', torch_accel.driver()
a = torch.randn(64, 64, device='accel'); b = torch.randn(64, 64, device='accel')
torch.testing.assert_close((a @ b).cpu(), a.cpu() @ b.cpu(), atol=1e-4, rtol=1e-4)
torch.accel.manual_seed(0); x = torch.rand(8, device='accel').cpu()
print('driver', torch_accel.driver(), 'gemm ok; first uniforms', x.tolist())
"
step tests 125 env TORCH_ACCEL_DRIVER=cuda "$PY" -m pytest -q -p no:cacheprovider \
  --junitxml="$DIR/tests.xml" tests/test_blas_ops.py tests/test_random_ops.py \
  tests/test_autocast.py tests/test_binary_ops.py tests/test_copy.py tests/test_fallback.py \
  tests/test_compile.py
step bench 55 env TORCH_ACCEL_DRIVER=cuda "$PY" benchmarks/gpu_side_by_side.py --out "$DIR"
# Triton kernels on accel vs accel eager (goal: >= 1.6x on the pointwise chain)
step compile 55 env TORCH_ACCEL_DRIVER=cuda "$PY" benchmarks/compile.py --no-lora --repeats 10 \
  --out "$DIR"

# NCCL through the accl backend: values and all_reduce bus bandwidth vs gloo on CPU tensors,
# two ranks on two GPUs, or a single rank on a one-GPU machine.
NGPU=$(nvidia-smi -L 2>/dev/null | grep -c GPU)
step nccl 25 env TORCH_ACCEL_DRIVER=cuda "$PY" benchmarks/distributed.py --world $(( NGPU >= 2 ? 2 : 1 )) \
  --no-lora --max-mib 64 --out "$DIR"

{ echo "{"; cat "$DIR/.steps"; echo "\"gpu\": \"$(head -n 2 "$DIR/gpu.txt" | tail -n 1)\"}"; } \
  >"$DIR/summary.json"
rm -f "$DIR/.steps"
cat "$DIR/summary.json"

// How plugin code (the CUDA driver and the kernels' .cu files) checks a CUDA call: every call
// goes through ACCEL_CUDA, every kernel launch through checkLaunch, so the rule of
// error_rule.h holds everywhere (tests/test_layers.py rejects a CUDA call outside them).
#pragma once

#include <cuda_runtime_api.h>

#include <string>

#include "runtime/cuda/error_rule.h"

namespace accel::rt::cuda {

struct CudaApi {
  using Code = cudaError_t;
  static constexpr Code kSuccess = cudaSuccess;
  static constexpr Code kNotReady = cudaErrorNotReady;
  static Error translate(Code e);
  static const char* describe(Code e) { return cudaGetErrorString(e); }
  static Code takeLastError() { return cudaGetLastError(); }
};

// The message of the calling thread's last failing CUDA call (empty after a success): what
// Driver::lastErrorMessage adds to the PyTorch error.
std::string& lastMessage();

inline Error check(cudaError_t e, const char* call) {
  return settle<CudaApi>(e, call, lastMessage());
}

inline bool probe(cudaError_t e) { return settleProbe<CudaApi>(e); }

// After a <<<...>>> launch: the launch's own failure (bad configuration, no kernel image).
inline Error checkLaunch(const char* kernel) {
  return settleLaunch<CudaApi>(kernel, lastMessage());
}

}  // namespace accel::rt::cuda

#define ACCEL_CUDA(call) ::accel::rt::cuda::check((call), #call)
#define ACCEL_CUDA_RETURN_IF_ERROR(call)                                                        \
  do {                                                                                          \
    if (::accel::rt::Error e_ = ACCEL_CUDA(call); e_ != ::accel::rt::Error::Success) return e_; \
  } while (0)

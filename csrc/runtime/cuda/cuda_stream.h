// What a Stream handle points to in the CUDA driver, for code compiled into the CUDA plugin
// (the driver and the kernels' .cu files). Plugin code gets its cudaStream_t from here, not
// from rt::driver(): the plugin is loaded RTLD_LOCAL and cannot see the runtime's symbols.
#pragma once

#include <cuda_runtime_api.h>

#include "runtime/driver.h"

namespace accel::rt::cuda {

// The default stream of each device is the legacy NULL stream, as in torch.cuda; it gets a
// CudaStream too, so that a Stream is never null and always knows its device.
struct CudaStream {
  cudaStream_t handle;
  int device;
  int priority;
};

inline CudaStream* toCudaStream(Stream stream) { return reinterpret_cast<CudaStream*>(stream); }

// The handle to launch on (nullptr, the legacy default stream, for a device's default stream).
inline cudaStream_t nativeStream(Stream stream) { return toCudaStream(stream)->handle; }

}  // namespace accel::rt::cuda

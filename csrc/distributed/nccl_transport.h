// The CUDA driver's transport: NCCL through the comm layer's plugin, on device memory, on the
// communication stream. The cross-rank argument check runs over gloo on the caller's thread
// before the NCCL calls are queued.
#pragma once

#include <chrono>
#include <memory>

#include <torch/csrc/distributed/c10d/Backend.hpp>
#include <torch/csrc/distributed/c10d/Store.hpp>

#include "distributed/transport.h"

namespace accel::dist {

// Raises a clear error when the NCCL plugin is missing or does not load.
std::unique_ptr<Transport> makeNcclTransport(const c10::intrusive_ptr<c10d::Store>& store,
                                             c10::intrusive_ptr<c10d::Backend> gloo, int rank,
                                             int world_size, std::chrono::milliseconds timeout);

}  // namespace accel::dist

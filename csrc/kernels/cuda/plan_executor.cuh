// The CUDA executor with the device's numbers for the shared launch plans (planReduce in
// reduce.h, scan_plan.h, planSort in sort.h): the SM count, asked once per device.
#pragma once

#include "kernels/cuda/executor.cuh"

namespace accel::kernels::cuda {

// The SM count of the stream's device.
inline int64_t smCount(rt::Stream stream) {
  constexpr int kMaxDevices = 64;
  static int64_t counts[kMaxDevices] = {};
  const int device = rt::cuda::toCudaStream(stream)->device;
  if (device < 0 || device >= kMaxDevices) return 1;
  if (counts[device] == 0) {
    int n = 0;
    if (ACCEL_CUDA(cudaDeviceGetAttribute(&n, cudaDevAttrMultiProcessorCount, device)) !=
        rt::Error::Success)
      return 1;
    counts[device] = n;
  }
  return counts[device];
}

struct PlanExecutor : Executor {
  static int64_t units(rt::Stream stream) { return smCount(stream); }
  static ScanGeometry scanGeometry(rt::Stream stream) { return cuda::scanGeometry(units(stream)); }
  static constexpr int64_t kSortTasksPerUnit = cuda::kSortTasksPerUnit;
};

}  // namespace accel::kernels::cuda

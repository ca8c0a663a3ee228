// The host executor with the host's numbers for the shared launch plans (scan_plan.h, planSort
// in sort.h): the families whose passes are planned (scans, compactions, sort) are built with it.
#pragma once

#include "kernels/host/executor.h"
#include "runtime/host/parallel.h"

namespace accel::kernels::host {

struct PlanExecutor : Executor {
  // Parallel units: the pool's threads.
  static int64_t units(rt::Stream) { return rt::host::numThreads(); }
  // A scan chunk is worth a pass of its own from about one task's grain of elements.
  static constexpr int64_t kScanMinChunk = kGrain;
  // forEach splits a launch by elements (kGrain), not by tasks: shorter sort tiles would add
  // passes over memory, never threads.
  static constexpr int64_t kSortTasksPerUnit = 1;
};

}  // namespace accel::kernels::host

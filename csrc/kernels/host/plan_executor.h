// The host executor with the host's numbers for the shared launch plans (planSort in sort.h):
// the families whose passes are planned are built with it.
#pragma once

#include "kernels/host/executor.h"
#include "runtime/host/parallel.h"

namespace accel::kernels::host {

struct PlanExecutor : Executor {
  // Parallel units: the pool's threads.
  static int64_t units(rt::Stream) { return rt::host::numThreads(); }
  // forEach splits a launch by elements (kGrain), not by tasks: shorter sort tiles would add
  // passes over memory, never threads.
  static constexpr int64_t kSortTasksPerUnit = 1;
};

}  // namespace accel::kernels::host

// The host executor with the host's numbers for the shared launch plans (scan_plan.h, planSort
// in sort.h): the families whose passes are planned (scans, compactions, sort) are built with it.
#pragma once

#include "kernels/host/executor.h"
#include "kernels/scan_plan.h"
#include "runtime/host/parallel.h"

namespace accel::kernels::host {

struct PlanExecutor : Executor {
  // Parallel units: the pool's threads.
  static int64_t units(rt::Stream) { return rt::host::numThreads(); }
  // Scans and compactions: 64 chunks a thread balance the pool's load; a chunk is worth a pass
  // of its own from about one task's grain of elements; the few carries fold 64 at a time.
  static ScanGeometry scanGeometry(rt::Stream stream) { return {units(stream), 64, kGrain, 64}; }
  // forEach splits a launch by elements (kGrain), not by tasks: shorter sort tiles would add
  // passes over memory, never threads.
  static constexpr int64_t kSortTasksPerUnit = 1;
};

}  // namespace accel::kernels::host
